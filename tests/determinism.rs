//! A seeded run is reproducible bit for bit, whatever the thread count.

use crate::util::Run;

#[test]
fn same_seed_gives_byte_identical_output() {
    let a = Run::of(&["run", "two-queue", "--duration", "5s"]);
    let b = Run::of(&["run", "two-queue", "--duration", "5s"]);
    a.assert_ok();
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn thread_count_does_not_change_the_output() {
    let one = Run::of(&[
        "run",
        "nvme-fio",
        "--duration",
        "300ms",
        "-j",
        "1",
        "--format",
        "json",
    ]);
    let many = Run::of(&[
        "run",
        "nvme-fio",
        "--duration",
        "300ms",
        "-j",
        "4",
        "--format",
        "json",
    ]);
    one.assert_ok();
    assert_eq!(one.stdout, many.stdout);
}

#[test]
fn a_different_seed_gives_different_output() {
    let a = Run::of(&["run", "two-queue", "--duration", "5s", "--seed", "1"]);
    let b = Run::of(&["run", "two-queue", "--duration", "5s", "--seed", "2"]);
    a.assert_ok();
    assert_ne!(a.stdout, b.stdout);
}
