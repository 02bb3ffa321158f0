//! Today's block layer and disks: blk-mq's hardware queues and mq-deadline, the SATA SSD
//! preset, HDD arrays and NVMe arrays run end to end with `--check-invariants`, and an array
//! spreads large reads over its drives.

use crate::util::{Run, TempDir};

/// The first `read: IOPS=` figure of a report (fio's `k` and `M` suffixes read).
fn read_iops(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("read: IOPS="))
        .unwrap_or_else(|| panic!("no read line:\n{stdout}"));
    let figure = line.split(',').next().unwrap();
    let (num, mult) = match figure.chars().last() {
        Some('k') => (&figure[..figure.len() - 1], 1e3),
        Some('M') => (&figure[..figure.len() - 1], 1e6),
        _ => (figure, 1.0),
    };
    num.parse::<f64>().unwrap() * mult
}

/// Runs `file` with `--check-invariants` and asserts every printed law holds.
fn run_checked(file: &str) -> Run {
    let run = Run::of(&["run", file, "--check-invariants"]);
    run.assert_ok();
    assert!(run.stdout.contains("invariants of `"), "{}", run.stdout);
    let failed = run.stdout.lines().find(|l| l.contains("  no  "));
    assert!(
        failed.is_none(),
        "an invariant failed: {failed:?}\n{}",
        run.stdout
    );
    run
}

/// Random 512 KiB reads at QD8 on `disks` 7200 rpm drives, no dm-crypt.
fn array(disks: u32) -> String {
    format!(
        "duration: 3s\nwarmup: 500ms\nreplications: 1\ncpus: 4\n\
         device: {{ kind: hdd7200, disks: {disks} }}\nblock: {{ mode: blk-mq }}\n\
         policies: [none, fifo]\n\
         workloads:\n  - {{ kind: fio, rw: randread, bs: 512k, iodepth: 8, size: 100GB }}\n"
    )
}

#[test]
fn an_hdd_array_spreads_large_reads_over_its_spindles() {
    let dir = TempDir::new();
    let one = read_iops(&run_checked(&dir.file("one.yaml", &array(1))).stdout);
    let four = read_iops(&run_checked(&dir.file("four.yaml", &array(4))).stdout);
    // Each 512 KiB read lands on one member (512 KiB chunks): four heads serve four at once.
    assert!(four > 2.5 * one, "4 disks {four} IOPS vs 1 disk {one}");
    let check = Run::of(&["check", &dir.file("c.yaml", &array(4))]);
    check.assert_ok().stdout_has_words(&[
        "4 drives on one HBA, md RAID0 of 512KiB chunks, 4TB in all",
        "scheduler             mq-deadline",
        "BLOCK_SOFTIRQ on CPU 0",
    ]);
}

#[test]
fn a_sata_ssd_under_mq_deadline_and_nvme_queues_satisfy_every_invariant() {
    let dir = TempDir::new();
    let ssd = "duration: 1s\nwarmup: 200ms\nreplications: 1\ncpus: 2\n\
               device: { kind: sata-ssd }\n\
               block: { mode: blk-mq, fifo_batch: 4, read_expire: 2ms, scheduler: mq-deadline }\n\
               policies: [none, fifo, inline]\n\
               workloads:\n  - { kind: fio, rw: randrw, iodepth: 32 }\n\
               \x20 - { kind: fio, rw: write, bs: 128k, iodepth: 4, sync: true }\n";
    let run = run_checked(&dir.file("ssd.yaml", ssd));
    // QD32 of 4 KiB reads and writes on one channel: near the 98k IOPS bottleneck, shared.
    assert!(read_iops(&run.stdout) > 10_000.0, "{}", run.stdout);
    let nvme = "duration: 300ms\nreplications: 1\ncpus: 8\ndevice: { kind: nvme }\n\
                block: { mode: blk-mq, hw_queues: 4, rq_affinity: 2 }\npolicies: [none, fifo]\n\
                workloads:\n  - { kind: fio, rw: randread, iodepth: 16 }\n";
    let file = dir.file("nvme.yaml", nvme);
    run_checked(&file);
    Run::of(&["check", &file]).assert_ok().stdout_has_words(&[
        "hw_queues             4 for 8 CPUs",
        "irq_cpus              0, 2, 4, 6",
        "hard IRQ on the submitting CPU or BLOCK_SOFTIRQ on the submitting CPU (rq_affinity 2)",
    ]);
}

/// Random 512 KiB reads at QD8 on `disks` PCIe 4.0 drives, no dm-crypt.
fn nvme_array(disks: u32) -> String {
    format!(
        "duration: 300ms\nwarmup: 50ms\nreplications: 1\ncpus: 4\n\
         device: {{ kind: nvme-gen4, disks: {disks} }}\nblock: {{ mode: blk-mq }}\n\
         policies: [none, fifo]\n\
         workloads:\n  - {{ kind: fio, rw: randread, bs: 512k, iodepth: 8, size: 100GB }}\n"
    )
}

#[test]
fn an_nvme_array_spreads_large_reads_over_its_drives_and_each_drive_pauses_alone() {
    let dir = TempDir::new();
    let one = read_iops(&run_checked(&dir.file("one.yaml", &nvme_array(1))).stdout);
    let four = read_iops(&run_checked(&dir.file("four.yaml", &nvme_array(4))).stdout);
    // A 512 KiB read holds one drive's bottleneck 71 us: one drive serves one at a time, four
    // serve four.
    assert!(four > 2.5 * one, "4 drives {four} IOPS vs 1 drive {one}");
    // The 2019 drive's pauses, one every 20 ms on each member, small chunks so that bios
    // span members, and dm-crypt's queued and inline policies.
    let paused = "duration: 300ms\nreplications: 2\ncpus: 4\n\
                  device: { kind: nvme, disks: 3, chunk: 16KiB, stall_interval: 20ms }\n\
                  block: { mode: blk-mq }\npolicies: [none, fifo, inline]\n\
                  workloads:\n  - { kind: fio, rw: randrw, bs: 64k, iodepth: 16 }\n";
    let file = dir.file("paused.yaml", paused);
    run_checked(&file);
    Run::of(&["check", &file]).assert_ok().stdout_has_words(&[
        "12ms pauses of the controller of each drive, one every 20ms on average",
        "3 drives, md RAID0 of 16KiB chunks, queue_depth 1023 each (3069 in all)",
        "x1 channels x3 drives)",
        "hard IRQ on the submitting CPU",
    ]);
}
