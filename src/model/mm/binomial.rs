//! Binomial draws for reclaim's batches: exactly rand_distr 0.6's `Binomial::new(n, p)` then
//! `sample(rng)` (the same uniform draws, the same result for every input), without its
//! `q.powf(n)` where that power cannot change the result.
//!
//! For `n·min(p, 1−p) < 10` rand_distr inverts the distribution function (Kachitvichyanukul and
//! Schmeiser's BINV): it starts from the probability of no success, `r₀ = qⁿ` by libm's `pow`,
//! and walks `u` down the probabilities `r₀, r₁, …` until `u ≤ r_k`. `pow` is most of that cost
//! (a tenth of `two-queue`'s time), and its last bit is libm's own, so no other way of
//! computing `qⁿ` is guaranteed to give the same `r₀`. The walk here starts from `qⁿ` by
//! repeated squaring, whose distance from libm's value is bounded (`(n + 1)` units in the last
//! place plus libm's one), and keeps the margin of every comparison `u > r_k`: when every margin
//! exceeds what that distance can move it, libm's `r₀` makes the same decisions and the same
//! result; when one does not, the draw is walked again from the same `u` with libm's `pow`. Every
//! other case (BTPE, the Poisson limit, `p` at 0 or 1, a huge `n`) is rand_distr's own code.

use crate::engine::SimRng;
use rand::RngExt;
use rand_distr::{Binomial, Distribution as _};

/// rand_distr's BINV threshold: below it the inversion is used.
const BINV_THRESHOLD: f64 = 10.0;
/// rand_distr's cap on BINV's walk: past it the walk starts over with a new uniform.
const BINV_MAX_X: u64 = 110;
/// One unit in the last place relative to the value, at its largest (2⁻⁵², `f64::EPSILON`).
const ULP: f64 = f64::EPSILON;

/// A draw from the binomial distribution of `n` trials with success probability `p`, equal
/// to `Binomial::new(n, p).unwrap().sample(rng)` of rand_distr 0.6 for every input and
/// stream state.
///
/// # Panics
/// If `p` is not within [0, 1] (as rand_distr's constructor refuses it).
pub fn sample(rng: &mut SimRng, n: u64, p: f64) -> u64 {
    let theirs = || Binomial::new(n, p).expect("valid binomial");
    if !(p > 0.0 && p < 1.0) || n > 1 << 32 {
        return theirs().sample(rng);
    }
    let flipped = p > 0.5;
    let pp = if flipped { 1.0 - p } else { p };
    if n as f64 * pp >= BINV_THRESHOLD {
        return theirs().sample(rng);
    }
    let q = 1.0 - pp;
    if q == 1.0 {
        return theirs().sample(rng);
    }
    let x = binv(n, pp, &mut || rng.random::<f64>());
    if flipped { n - x } else { x }
}

/// BINV for `n` trials of probability `p` (at most ½, `n·p` below the threshold), a uniform
/// from `draw` per walk, as rand_distr walks it from libm's `qⁿ`.
fn binv(n: u64, p: f64, draw: &mut impl FnMut() -> f64) -> u64 {
    let q = 1.0 - p;
    let s = p / q;
    let a = (n as f64 + 1.0) * s;
    let fast = power(q, n);
    // Relative distance of `fast` from libm's pow(q, n): repeated squaring's (n − 1) half-units
    // and libm's one unit, rounded up generously.
    let rel = (n as f64 + 2.0) * ULP;
    let mut exact: Option<f64> = None;
    loop {
        let u = draw();
        let walk = match exact {
            Some(r) => walk(r, s, a, u, None),
            None => match walk(fast, s, a, u, Some(rel)) {
                Walk::Unsure => {
                    // `black_box` keeps the compiler from computing this pure call ahead of
                    // the branch, on every draw (it did: the saving was gone).
                    let r = std::hint::black_box(q).powf(n as f64);
                    exact = Some(r);
                    walk(r, s, a, u, None)
                }
                w => w,
            },
        };
        match walk {
            Walk::Found(x) => return x,
            Walk::Restart => continue,
            Walk::Unsure => unreachable!("a walk without a tolerance is always sure"),
        }
    }
}

/// `xⁿ` by repeated squaring.
fn power(x: f64, mut n: u64) -> f64 {
    let (mut base, mut acc) = (x, 1.0);
    while n > 0 {
        if n & 1 == 1 {
            acc *= base;
        }
        base *= base;
        n >>= 1;
    }
    acc
}

/// How one BINV walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// `u` fell within the `x`-th probability.
    Found(u64),
    /// The walk passed [`BINV_MAX_X`]: rand_distr draws a new uniform.
    Restart,
    /// A comparison was too close to call with an approximate start.
    Unsure,
}

/// rand_distr's BINV walk from `r0` for the uniform `u`. With `tol = Some(rel)`, `r0` is
/// within a relative `rel` of the true start, and the walk reports [`Walk::Unsure`] when a
/// comparison's margin is within what that could move.
fn walk(r0: f64, s: f64, a: f64, u: f64, tol: Option<f64>) -> Walk {
    let (mut r, mut u, mut x) = (r0, u, 0u64);
    loop {
        if let Some(rel) = tol {
            // Every r and u is within [0, 1]: the two walks' r differ by at most
            // (rel + 2(x + 1) ulp), and their u by the sum of the r differences so far plus
            // a rounding of each subtraction; four times that, plus slack, bounds the gap.
            let bound = 4.0 * (rel + (x as f64 + 2.0) * 4.0 * ULP);
            if (u - r).abs() <= bound {
                return Walk::Unsure;
            }
        }
        if u <= r {
            return Walk::Found(x);
        }
        u -= r;
        x += 1;
        if x > BINV_MAX_X {
            return Walk::Restart;
        }
        r *= a / (x as f64) - s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    fn theirs(rng: &mut SimRng, n: u64, p: f64) -> u64 {
        Binomial::new(n, p).unwrap().sample(rng)
    }

    /// Draw for draw and result for result the same as rand_distr, over the inputs reclaim
    /// gives it (batches of 1 to 64 pages, shares from tiny to nearly all) and beyond, with the
    /// two streams left in the same state.
    #[test]
    fn every_draw_is_rand_distrs() {
        let streams = RngStreams::new(7, 0);
        let (mut a, mut b) = (streams.stream("x"), streams.stream("x"));
        let mut pick = streams.stream("inputs");
        for _ in 0..200_000 {
            let n = match pick.random::<f64>() {
                u if u < 0.8 => 1 + (pick.random::<f64>() * 64.0) as u64,
                _ => (pick.random::<f64>() * 5000.0) as u64,
            };
            let p = match pick.random::<f64>() {
                u if u < 0.1 => 0.0,
                u if u < 0.2 => 1.0,
                u if u < 0.3 => pick.random::<f64>() * 1e-6,
                _ => pick.random::<f64>(),
            };
            assert_eq!(sample(&mut a, n, p), theirs(&mut b, n, p), "n {n}, p {p}");
        }
        assert_eq!(
            a.random::<u64>(),
            b.random::<u64>(),
            "the streams stay in step"
        );
    }

    /// rand_distr's BINV walk as it is written there, from libm's `qⁿ`.
    fn their_binv(n: u64, p: f64, draw: &mut impl FnMut() -> f64) -> u64 {
        let q = 1.0 - p;
        let (s, r0) = (p / q, q.powf(n as f64));
        let a = (n as f64 + 1.0) * s;
        'outer: loop {
            let (mut r, mut u, mut x) = (r0, draw(), 0);
            while u > r {
                u -= r;
                x += 1;
                if x > BINV_MAX_X {
                    continue 'outer;
                }
                r *= a / (x as f64) - s;
            }
            return x;
        }
    }

    /// Uniforms that land on a probability's edge (where only libm's start decides) give
    /// rand_distr's result: the walk falls back to `pow` for them.
    #[test]
    fn uniforms_on_the_edges_take_libms_start() {
        for (n, p) in [(4u64, 0.25), (32, 0.1), (17, 0.3), (60, 0.15)] {
            let q = 1.0f64 - p;
            let (s, r0) = (p / q, q.powf(n as f64));
            let a = (n as f64 + 1.0) * s;
            // The cumulative edges as the walk computes them, and a hair either side.
            let mut edges = vec![];
            let (mut r, mut c) = (r0, 0.0);
            for x in 1..8 {
                c += r;
                edges.push(c);
                r *= a / (x as f64) - s;
            }
            // (Edges at the top of the distribution are left out: a uniform past the last
            // one would restart the walk with the same draw forever.)
            let rel = (n as f64 + 2.0) * ULP;
            let unsure = edges
                .iter()
                .filter(|&&e| walk(power(q, n), s, a, e, Some(rel)) == Walk::Unsure)
                .count();
            assert!(unsure > 0, "n {n}, p {p}: no edge is too close to call");
            for e in edges.into_iter().filter(|&e| e < 0.999) {
                for u in [e, e.next_down(), e.next_up()] {
                    let mine = binv(n, p, &mut || u);
                    let theirs = their_binv(n, p, &mut || u);
                    assert_eq!(mine, theirs, "n {n}, p {p}, u {u}");
                }
            }
        }
    }

    /// The squared power stays within the bound the walk assumes of libm's `pow`.
    #[test]
    fn repeated_squaring_is_within_the_assumed_distance_of_pow() {
        let streams = RngStreams::new(11, 0);
        let mut g = streams.stream("q");
        for _ in 0..100_000 {
            let q = 0.5 + 0.5 * g.random::<f64>();
            let n = 1 + (g.random::<f64>() * 200.0) as u64;
            let (fast, libm) = (power(q, n), q.powf(n as f64));
            let rel = ((fast - libm) / libm).abs();
            assert!(rel <= (n as f64 + 2.0) * ULP, "q {q}, n {n}: {rel:e}");
        }
    }

    /// A comparison too close to call sends the walk to libm's start: a start that is off by
    /// more than the tolerance could only change the result through such a comparison.
    #[test]
    fn a_close_comparison_is_unsure_and_a_clear_one_is_not() {
        // n = 4, p = 0.25: r0 = 0.75^4 = 0.31640625.
        let (q, n) = (0.75f64, 4u64);
        let s = 0.25 / q;
        let a = (n as f64 + 1.0) * s;
        let r0 = q.powf(n as f64);
        assert_eq!(walk(r0, s, a, 0.1, Some(1e-15)), Walk::Found(0));
        assert_eq!(walk(r0, s, a, r0, Some(1e-15)), Walk::Unsure);
        assert_eq!(walk(r0, s, a, r0, None), Walk::Found(0));
        assert_eq!(walk(r0, s, a, 0.5, None), Walk::Found(1));
    }
}
