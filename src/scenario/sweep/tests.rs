use super::*;
use crate::scenario::testutil::*;

const NVME: &str =
    "device: { kind: nvme }\npolicies: [fifo, split]\nworkloads:\n  - kind: fio\n    rate: 100/s\n";

#[test]
fn a_range_expands_into_one_variant_per_point() {
    let s = ok(&format!(
        "{NVME}sweep:\n  - path: crypt.encrypt_rate+crypt.decrypt_rate\n    range: {{ from: 60MB/s, to: 1432MiB/s, points: 4, scale: log }}\n"
    ));
    let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
    let p = "crypt.encrypt_rate+crypt.decrypt_rate";
    assert_eq!(
        names,
        [
            format!("{p}=60MB/s"),
            format!("{p}=175.5MB/s"),
            format!("{p}=513.3MB/s"),
            format!("{p}=1432MiB/s"),
        ]
    );
    let v = &s.variants[1].scenario;
    assert_eq!(
        (v.crypt.encrypt_rate, v.crypt.decrypt_rate),
        (175.5e6, 175.5e6)
    );
    let plan = s.sweep.as_ref().unwrap();
    assert_eq!(plan.kind, SweepKind::Grid);
    assert!(plan.params[0].log);
    assert_eq!(plan.params[0].unit, "MB/s");
    assert_eq!(plan.params[0].values[3].x, Some(1432.0 * 1048576.0 / 1e6));
}

#[test]
fn two_parameters_make_a_grid_and_list_items_can_be_swept() {
    let s = ok(&format!(
        "{NVME}sweep:\n  - path: workloads[0].numjobs\n    values: [1, 4]\n  - path: crypt.cipher\n    values: [aes-2009, aes-ni, null]\n"
    ));
    assert_eq!(s.variants.len(), 6);
    assert_eq!(
        s.variants[4].name,
        "workloads[0].numjobs=4,crypt.cipher=aes-ni"
    );
    let WorkloadKind::Fio(f) = &s.variants[4].scenario.workloads[0].kind else {
        panic!("fio")
    };
    assert_eq!(f.numjobs, 4);
    assert_eq!(s.variants[4].scenario.crypt.cipher, "aes-ni");
    assert_eq!(
        s.sweep.unwrap().params[1].values[0].x,
        None,
        "names have no number"
    );
}

#[test]
fn bad_sweeps_are_located() {
    let e = err(&format!(
        "{NVME}sweep:\n  - path: crypt.cipher\n    values: [aes-ni, x]\n"
    ));
    assert_eq!(place(&e), (Some(7), Some(5), Some("sweep[0]")));
    assert!(
        e.message()
            .starts_with("sweep point `crypt.cipher=x`: crypt.cipher:"),
        "{e}"
    );
    let e = err(&format!(
        "{NVME}sweep:\n  - path: seed\n    values: [1, 2]\n"
    ));
    assert_eq!(e.path(), Some("sweep[0].path"));
    let e = err(&format!("{NVME}sweep:\n  - path: cpus\n"));
    assert_eq!(e.path(), Some("sweep[0]"));
    let e = err(&format!(
        "{NVME}sweep:\n  - path: cpus\n    range: {{ from: 1, to: 3, points: 5 }}\n"
    ));
    assert_eq!(e.path(), Some("sweep[0].range.points"));
    assert!(e.message().contains("twice"), "{e}");
    let e = err(&format!(
        "{NVME}sweep:\n  - path: cpus\n    values: [1]\nsensitivity: {{ knobs: [{{ path: cpus }}] }}\n"
    ));
    assert_eq!(e.path(), Some("sensitivity"));
    let three = "  - { path: cpus, values: [1] }\n".repeat(3);
    assert_eq!(err(&format!("{NVME}sweep:\n{three}")).path(), Some("sweep"));
}

#[test]
fn a_study_moves_each_knob_down_and_up_from_the_written_value() {
    let s = ok(&format!(
        "{NVME}cpus: 2\nblock: {{ nr_requests: 128 }}\nsensitivity:\n  knobs:\n    - path: cpus\n    - {{ path: block.nr_requests, step: 50% }}\n    - {{ name: cipher, path: crypt.cipher, low: aes-2009, high: aes-ni }}\n"
    ));
    let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "base",
            "cpus-",
            "cpus+",
            "block.nr_requests-",
            "block.nr_requests+",
            "cipher-",
            "cipher+"
        ]
    );
    assert_eq!(
        (s.variants[1].scenario.cpus, s.variants[2].scenario.cpus),
        (1, 3),
        "whole numbers move by 1 at least"
    );
    assert_eq!(s.variants[3].scenario.block.nr_requests, 64);
    assert_eq!(s.variants[6].scenario.crypt.cipher, "aes-ni");
    let plan = s.sweep.unwrap();
    assert_eq!(plan.metric.as_deref(), Some(DEFAULT_METRIC));
    assert_eq!(
        plan.params[0].values[2].text, "2",
        "the base value is kept third"
    );
    let e = err(&format!(
        "{NVME}sensitivity:\n  knobs:\n    - path: memory.ram\n"
    ));
    assert_eq!(e.path(), Some("sensitivity.knobs[0].path"));
    assert!(e.hint().unwrap().contains("low:"), "{e}");
}
