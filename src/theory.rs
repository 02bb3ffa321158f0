//! Closed-form results of queueing theory that `qsim validate` checks the simulator against.
//!
//! Every function takes rates in customers per second and times in seconds and returns seconds
//! (or customers per second), so a caller converts units once. Inputs outside a formula's domain
//! (an unstable queue, a negative rate) are programmer errors and panic with the reason.
//!
//! | function | system | result | reference |
//! |---|---|---|---|
//! | [`mm1_wait`], [`mm1_sojourn`], [`mm1_sojourn_quantile`] | M/M/1 | `Wq = ρ/(μ−λ)`, `W = 1/(μ−λ)`, sojourn ~ Exp(μ−λ) | Kleinrock, *Queueing Systems* vol. 1 (1975), §3.2; Gross & Harris, *Fundamentals of Queueing Theory*, §2.2 |
//! | [`erlang_c`], [`mmc_wait`] | M/M/c | `Wq = C(c, a) / (cμ − λ)` with Erlang's C formula | Kleinrock vol. 1 §3.5; Gross & Harris §2.3 |
//! | [`mg1_wait`] | M/G/1 (M/D/1, lognormal, …) | Pollaczek–Khinchine: `Wq = λ E[S²] / (2(1−ρ))` | Kleinrock vol. 1 §5.6; Gross & Harris §5.1 |
//! | [`priority_waits`] | M/G/1, K classes, non-preemptive priority | Cobham: `W_k = W0 / ((1−σ_{k−1})(1−σ_k))`, `W0 = Σ λ_i E[S_i²] / 2` | Cobham, *Priority assignment in waiting line problems*, JORSA 2 (1954); Kleinrock vol. 2 (1976) §3.6 |
//! | [`mva_single_station`] | closed: one FCFS exponential station + a delay (think) station, N customers | exact mean value analysis | Reiser & Lavenberg, *Mean-value analysis of closed multichain queuing networks*, JACM 27 (1980) |
//!
//! Symbols: `λ` arrival rate, `μ = 1/E[S]` service rate, `ρ = λ/(cμ)` utilisation, `a = λ/μ`
//! offered load in Erlangs, `σ_k` the summed utilisation of classes `1..=k` (class 1 is served
//! first).

/// Panics unless `x` is finite and strictly positive; `what` names the argument.
fn positive(x: f64, what: &str) {
    assert!(
        x.is_finite() && x > 0.0,
        "{what} must be finite and > 0, got {x}"
    );
}

/// Utilisation `λ / (c μ)` of a stable `c`-server queue; panics if it is not below 1.
fn stable_utilisation(lambda: f64, mu: f64, c: u32) -> f64 {
    positive(lambda, "arrival rate");
    positive(mu, "service rate");
    assert!(c >= 1, "at least one server is needed");
    let rho = lambda / (f64::from(c) * mu);
    assert!(rho < 1.0, "unstable queue: utilisation {rho} >= 1");
    rho
}

/// M/M/1 mean time in queue (before service), in seconds: `ρ / (μ − λ)`.
pub fn mm1_wait(lambda: f64, mu: f64) -> f64 {
    let rho = stable_utilisation(lambda, mu, 1);
    rho / (mu - lambda)
}

/// M/M/1 mean sojourn (wait + service), in seconds: `1 / (μ − λ)`.
pub fn mm1_sojourn(lambda: f64, mu: f64) -> f64 {
    stable_utilisation(lambda, mu, 1);
    1.0 / (mu - lambda)
}

/// M/M/1 (FCFS) sojourn-time quantile `p` (0 < p < 1), in seconds. The sojourn is exponential
/// with rate `μ − λ`, so the quantile is `−ln(1 − p) / (μ − λ)`.
pub fn mm1_sojourn_quantile(lambda: f64, mu: f64, p: f64) -> f64 {
    stable_utilisation(lambda, mu, 1);
    assert!(
        p > 0.0 && p < 1.0,
        "quantile level must be in (0, 1), got {p}"
    );
    -(1.0 - p).ln() / (mu - lambda)
}

/// Erlang's C formula: the probability that an arrival to an M/M/c queue waits, with offered
/// load `a = λ/μ` Erlangs on `c` servers (`a < c`).
///
/// Computed through the Erlang B recursion `B(0) = 1`, `B(k) = a B(k−1) / (k + a B(k−1))` and
/// `C = B / (1 − ρ(1 − B))`, which never forms `a^c / c!` and so stays accurate for large `c`.
pub fn erlang_c(c: u32, a: f64) -> f64 {
    positive(a, "offered load");
    assert!(c >= 1, "at least one server is needed");
    let rho = a / f64::from(c);
    assert!(rho < 1.0, "unstable queue: utilisation {rho} >= 1");
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (f64::from(k) + a * b);
    }
    b / (1.0 - rho * (1.0 - b))
}

/// M/M/c mean time in queue, in seconds: `C(c, λ/μ) / (cμ − λ)`.
pub fn mmc_wait(lambda: f64, mu: f64, c: u32) -> f64 {
    stable_utilisation(lambda, mu, c);
    erlang_c(c, lambda / mu) / (f64::from(c) * mu - lambda)
}

/// M/G/1 mean time in queue (Pollaczek–Khinchine), in seconds, from the service time's mean
/// `E[S]` (s) and second moment `E[S²]` (s²): `λ E[S²] / (2 (1 − λ E[S]))`.
pub fn mg1_wait(lambda: f64, mean_s: f64, second_moment_s2: f64) -> f64 {
    positive(mean_s, "mean service time");
    assert!(
        second_moment_s2 >= mean_s * mean_s * (1.0 - 1e-12),
        "E[S^2] = {second_moment_s2} is below E[S]^2 = {}",
        mean_s * mean_s
    );
    let rho = stable_utilisation(lambda, 1.0 / mean_s, 1);
    lambda * second_moment_s2 / (2.0 * (1.0 - rho))
}

/// One customer class of a priority queue: Poisson arrivals and a service-time distribution
/// given by its first two moments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorityClass {
    /// Arrival rate, per second.
    pub lambda: f64,
    /// Mean service time `E[S]`, seconds.
    pub mean_s: f64,
    /// Second moment of the service time `E[S²]`, seconds squared.
    pub second_moment_s2: f64,
}

/// Mean time in queue of each class of a non-preemptive priority M/G/1 queue (Cobham 1954), in
/// seconds, classes listed from highest priority (served first) to lowest:
/// `W_k = W0 / ((1 − σ_{k−1})(1 − σ_k))` with `W0 = Σ λ_i E[S_i²] / 2` the mean residual work
/// an arrival finds in service and `σ_k = Σ_{i≤k} λ_i E[S_i]`.
pub fn priority_waits(classes: &[PriorityClass]) -> Vec<f64> {
    assert!(!classes.is_empty(), "at least one class is needed");
    for c in classes {
        positive(c.lambda, "class arrival rate");
        positive(c.mean_s, "class mean service time");
    }
    let w0: f64 = classes
        .iter()
        .map(|c| c.lambda * c.second_moment_s2)
        .sum::<f64>()
        / 2.0;
    let mut sigma_before = 0.0;
    classes
        .iter()
        .map(|c| {
            let sigma = sigma_before + c.lambda * c.mean_s;
            assert!(sigma < 1.0, "unstable queue: utilisation {sigma} >= 1");
            let w = w0 / ((1.0 - sigma_before) * (1.0 - sigma));
            sigma_before = sigma;
            w
        })
        .collect()
}

/// Throughput and response time of a closed network by exact mean value analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClosedResult {
    /// System throughput, customers per second.
    pub throughput: f64,
    /// Mean response time at the queueing station (wait + service), seconds.
    pub response: f64,
    /// Mean number of customers at the queueing station.
    pub queue_len: f64,
}

/// Exact MVA (Reiser & Lavenberg 1980) for `n` customers cycling between one FCFS station with
/// exponential service of mean `service_s` and a delay (think) station of mean `think_s`
/// (any distribution: the delay station is insensitive).
///
/// With one customer fewer the station holds `Q(n−1)`; by the arrival theorem a customer
/// arriving with `n` in the network sees that, so `R(n) = S (1 + Q(n−1))`,
/// `X(n) = n / (R(n) + Z)` and `Q(n) = X(n) R(n)`, starting from `Q(0) = 0`.
pub fn mva_single_station(n: u32, service_s: f64, think_s: f64) -> ClosedResult {
    positive(service_s, "service time");
    assert!(
        think_s.is_finite() && think_s >= 0.0,
        "think time must be finite and >= 0, got {think_s}"
    );
    assert!(n >= 1, "at least one customer is needed");
    let mut q = 0.0;
    let mut result = ClosedResult {
        throughput: 0.0,
        response: 0.0,
        queue_len: 0.0,
    };
    for k in 1..=n {
        let r = service_s * (1.0 + q);
        let x = f64::from(k) / (r + think_s);
        q = x * r;
        result = ClosedResult {
            throughput: x,
            response: r,
            queue_len: q,
        };
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) {
        assert!(
            (got - want).abs() <= rel * want.abs(),
            "got {got}, want {want} (relative tolerance {rel})"
        );
    }

    #[test]
    fn mm1_at_rho_0_8() {
        // λ = 0.8, μ = 1: W = 1/(1 − 0.8) = 5, Wq = 0.8 · 5 = 4,
        // p90 of Exp(0.2) = 5 ln 10 = 11.5129…, median = 5 ln 2 = 3.4657…
        close(mm1_sojourn(0.8, 1.0), 5.0, 1e-12);
        close(mm1_wait(0.8, 1.0), 4.0, 1e-12);
        close(
            mm1_sojourn_quantile(0.8, 1.0, 0.9),
            11.512_925_464_970_229,
            1e-12,
        );
        close(
            mm1_sojourn_quantile(0.8, 1.0, 0.5),
            3.465_735_902_799_726_5,
            1e-12,
        );
        // Units scale: λ = 800/s, E[S] = 1 ms gives W = 5 ms.
        close(mm1_sojourn(800.0, 1000.0), 0.005, 1e-12);
    }

    #[test]
    fn erlang_c_worked_examples() {
        // c = 1: an arrival waits iff the server is busy, probability ρ.
        close(erlang_c(1, 0.7), 0.7, 1e-12);
        // c = 2, a = 1 (ρ = 0.5): a²/2! / (1 − ρ) = 1; Σ_{k<2} a^k/k! = 2; C = 1 / (2 + 1) = 1/3.
        // Wq = C / (2μ − λ) = 1/3, matching the M/M/2 textbook Lq = 2ρ³/(1 − ρ²) = 1/3 at λ = 1.
        close(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
        close(mmc_wait(1.0, 1.0, 2), 1.0 / 3.0, 1e-12);
        // c = 4, a = 3 (ρ = 0.75): a⁴/4! = 81/24 = 3.375, / 0.25 = 13.5;
        // Σ_{k<4} = 1 + 3 + 4.5 + 4.5 = 13; C = 13.5 / 26.5 = 0.509433…; Wq = C / (4 − 3).
        close(erlang_c(4, 3.0), 13.5 / 26.5, 1e-12);
        close(mmc_wait(3.0, 1.0, 4), 13.5 / 26.5, 1e-12);
        // M/M/c with c = 1 is M/M/1.
        close(mmc_wait(0.8, 1.0, 1), mm1_wait(0.8, 1.0), 1e-12);
    }

    #[test]
    fn erlang_c_matches_the_direct_sum_for_many_servers() {
        // The slow, obvious form: a^c/c!/(1 − ρ) over Σ_{k<c} a^k/k! + a^c/c!/(1 − ρ).
        for (c, a) in [(8u32, 6.0f64), (16, 15.0), (40, 30.0)] {
            let mut term = 1.0;
            let mut sum = 0.0;
            for k in 0..c {
                sum += term;
                term *= a / f64::from(k + 1);
            }
            let top = term / (1.0 - a / f64::from(c));
            close(erlang_c(c, a), top / (sum + top), 1e-10);
        }
    }

    #[test]
    fn pollaczek_khinchine_worked_examples() {
        // M/M/1 as an M/G/1: E[S] = 1, E[S²] = 2, λ = 0.5:
        // Wq = 0.5 · 2 / (2 · 0.5) = 1 = ρ/(μ − λ).
        close(mg1_wait(0.5, 1.0, 2.0), 1.0, 1e-12);
        close(mg1_wait(0.5, 1.0, 2.0), mm1_wait(0.5, 1.0), 1e-12);
        // M/D/1: E[S²] = 1, half the M/M/1 wait: 0.5.
        close(mg1_wait(0.5, 1.0, 1.0), 0.5, 1e-12);
        // Lognormal with mean 1 and standard deviation 2: E[S²] = 1 + 4 = 5,
        // Wq = 0.5 · 5 / 1 = 2.5.
        close(mg1_wait(0.5, 1.0, 5.0), 2.5, 1e-12);
        // Seconds and milliseconds: λ = 800/s, D = 1 ms: Wq = 800 · 1e-6 / (2 · 0.2) = 2 ms.
        close(mg1_wait(800.0, 1e-3, 1e-6), 2e-3, 1e-12);
    }

    #[test]
    fn cobham_worked_example_and_conservation() {
        // Two classes, λ = 0.25 each, exponential service of mean 1 (E[S²] = 2):
        // W0 = (0.25 · 2 + 0.25 · 2) / 2 = 0.5; W1 = 0.5 / (1 · 0.75) = 2/3;
        // W2 = 0.5 / (0.75 · 0.5) = 4/3.
        let class = PriorityClass {
            lambda: 0.25,
            mean_s: 1.0,
            second_moment_s2: 2.0,
        };
        let w = priority_waits(&[class, class]);
        close(w[0], 2.0 / 3.0, 1e-12);
        close(w[1], 4.0 / 3.0, 1e-12);
        // Kleinrock's conservation law: with equal service distributions the load-weighted mean
        // wait equals the FCFS wait, M/M/1 at ρ = 0.5: 1.
        close((w[0] + w[1]) / 2.0, mm1_wait(0.5, 1.0), 1e-12);
        // One class is plain P-K.
        close(priority_waits(&[class])[0], mg1_wait(0.25, 1.0, 2.0), 1e-12);
    }

    #[test]
    fn mva_small_cases_by_hand() {
        // One customer never waits: R = S, X = 1/(S + Z).
        let r = mva_single_station(1, 1.0, 3.0);
        close(r.response, 1.0, 1e-12);
        close(r.throughput, 0.25, 1e-12);
        // N = 2, S = Z = 1: Q(1) = 1/2; R(2) = 1.5, X(2) = 2/2.5 = 0.8, Q(2) = 1.2. The
        // machine-repairman chain agrees: p0 : p1 : p2 = 1 : 2 : 2, so the utilisation
        // 1 − p0 = 0.8.
        let r = mva_single_station(2, 1.0, 1.0);
        close(r.response, 1.5, 1e-12);
        close(r.throughput, 0.8, 1e-12);
        close(r.queue_len, 1.2, 1e-12);
        // No think time: the station is always busy, X = 1/S, R = N S.
        let r = mva_single_station(5, 2.0, 0.0);
        close(r.throughput, 0.5, 1e-12);
        close(r.response, 10.0, 1e-12);
    }

    #[test]
    fn mva_matches_the_machine_repairman_chain() {
        // The slow, obvious form (Kleinrock vol. 1 §3.8, M/M/1//N): p_k ∝ N!/(N−k)! (S/Z)^k,
        // X = (1 − p0)/S, and Little's law on the whole cycle gives R = N/X − Z.
        for (n, s, z) in [(8u32, 1.0f64, 8.0f64), (3, 2.0, 0.5), (20, 0.3, 4.0)] {
            let mut weights = vec![1.0f64];
            for k in 1..=n {
                let prev = weights[k as usize - 1];
                weights.push(prev * f64::from(n - k + 1) * s / z);
            }
            let total: f64 = weights.iter().sum();
            let x = (1.0 - weights[0] / total) / s;
            let r = mva_single_station(n, s, z);
            close(r.throughput, x, 1e-10);
            close(r.response, f64::from(n) / x - z, 1e-10);
        }
    }

    #[test]
    #[should_panic(expected = "unstable queue")]
    fn an_unstable_queue_is_refused() {
        mm1_wait(1.0, 1.0);
    }
}
