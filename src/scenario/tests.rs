//! The loader end to end: located errors, hints, `--set` overrides and capped reads.

use super::error::{edit_distance, line_window};
use super::*;

fn err(text: &str) -> Error {
    load_str("x.yaml", text).expect_err("should fail")
}

const BASE: &str = "device: { kind: nvme }\nworkloads:\n  - kind: fio\n";

#[test]
fn suggestions_catch_typos_only() {
    let fields = ["workers", "name", "workloads"];
    assert_eq!(suggestion("wrokers", &fields), Some("workers"));
    assert_eq!(suggestion("workload", &fields), Some("workloads"));
    assert_eq!(suggestion("zzz", &fields), None);
    assert_eq!(suggestion("splti", &["fifo", "split"]), Some("split"));
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("ab", "ba"), 1);
}

#[test]
fn the_minimal_scenario_loads() {
    let s = load_str("dir/mini.yaml", MINIMAL_SCENARIO).unwrap();
    assert_eq!(s.name, "mini");
    load_str("x.yaml", BASE).unwrap();
}

#[test]
fn typo_at_any_depth_is_located_with_a_suggestion() {
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    iodpeth: 4\n");
    assert_eq!(e.kind(), ErrorKind::UnknownField);
    assert_eq!((e.line(), e.column()), (Some(4), Some(5)));
    assert_eq!(e.path(), Some("workloads[0].iodpeth"));
    assert!(
        e.hint().unwrap().starts_with("did you mean `iodepth`?"),
        "{e}"
    );
    let e = err(&format!("{BASE}crypt:\n  hop_cots: 1us\n"));
    assert_eq!(e.path(), Some("crypt.hop_cots"));
    assert!(e.hint().unwrap().contains("`hop_cost`"));
    let e = err(&format!("{BASE}sed: 3\n"));
    assert!(e.hint().unwrap().contains("`seed`"), "{e}");
}

#[test]
fn wrong_units_are_located_and_hinted() {
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    bs: 4kk\n");
    assert_eq!(e.kind(), ErrorKind::BadValue);
    assert_eq!((e.line(), e.column()), (Some(4), Some(9)));
    assert_eq!(e.path(), Some("workloads[0].bs"));
    assert!(e.message().contains("\"4kk\""));
    assert_eq!(e.hint(), Some(units::SIZE_HINT));
    let e = err(&format!("{BASE}duration: 10 parsecs\n"));
    assert_eq!(e.path(), Some("duration"));
    assert!(e.message().contains("parsecs"), "{e}");
    let e = err(&format!("{BASE}duration: 100\n"));
    assert!(e.message().contains("durations need a unit"), "{e}");
}

#[test]
fn display_is_one_screen_with_hint_and_caret() {
    let e =
        err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n  - kind: fio\n    rate: -5/s\n");
    let shown = e.to_string();
    let expected = "x.yaml:5:11: workloads[1].rate: rate must be positive, got \"-5/s\"\n  hint: ";
    assert!(shown.starts_with(expected), "{shown}");
    assert!(
        shown.ends_with("  5 |     rate: -5/s\n    |           ^"),
        "{shown}"
    );
}

#[test]
fn empty_files_show_a_minimal_scenario() {
    for text in ["", "# nothing\n", "---\n"] {
        let e = err(text);
        assert_eq!(e.kind(), ErrorKind::Empty);
        assert_eq!(e.line(), None);
        assert_eq!(
            e.to_string().lines().next(),
            Some("x.yaml: the scenario file is empty")
        );
        assert!(e.hint().unwrap().contains("kind: nvme"));
    }
}

#[test]
fn missing_files_name_the_path_reason_and_shipped_scenarios() {
    let e = load(Path::new("/nonexistent/dir/x.yaml")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Read);
    let shown = e.to_string();
    assert!(
        shown.starts_with(
            "/nonexistent/dir/x.yaml: cannot read the scenario file: No such file or directory"
        ),
        "{shown}"
    );
    assert!(shown.contains("two-queue"), "{shown}");
    assert!(std::error::Error::source(&e).is_some());
    assert_eq!(e.exit_code(), 2);
    let e = load(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Read);
    assert!(e.hint().unwrap().contains("scenario file"), "{e}");
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let e = err("device: { kind: hdd5401 }\nworkloads:\n  - kind: fio\n");
    assert_eq!(e.kind(), ErrorKind::UnknownName);
    assert_eq!(e.path(), Some("device.kind"));
    assert_eq!(e.message(), "unknown device kind `hdd5401`");
    assert!(
        e.hint().unwrap().starts_with("did you mean `hdd5400`?"),
        "{e}"
    );
    let e = err(&format!("{BASE}crypt: {{ cipher: aes }}\n"));
    assert!(
        e.hint()
            .unwrap()
            .contains("aes-2009, aes-ni, vaes, vaes-zen4, vaes-spr, null"),
        "{e}"
    );
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: foo\n");
    assert_eq!(e.message(), "unknown workload kind `foo`");
    assert!(e.hint().unwrap().contains("fio, gitk, buffered-writer"));
}

#[test]
fn syntax_errors_are_located() {
    let e = err("device: { kind: nvme\nworkloads: [\n");
    assert!(e.line().is_some(), "{e}");
    let e = err("name: a: b\n");
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_eq!(e.line(), Some(1));
    let e = err("device:\n\tkind: nvme\n");
    assert_eq!(e.kind(), ErrorKind::Syntax);
    let e = err("just words\n");
    assert_eq!(
        e.message(),
        "expected a mapping of keys to values, got \"just words\""
    );
    let e = err(&format!("{BASE}kernel: 250\n"));
    assert_eq!(
        (e.path(), e.message()),
        (Some("kernel"), "expected a mapping, got \"250\"")
    );
    let e = err(&format!("{BASE}policies: fifo\n"));
    assert_eq!(e.message(), "expected a list, got \"fifo\"");
    let e = err("device: { kind: nvme\nworkloads: [\n");
    assert!(e.hint().unwrap().contains("left unclosed"), "{e}");
    let e = err(&format!("{BASE}seed: 1\nseed: 2\n"));
    assert!(e.message().contains("duplicate key `seed`"), "{e}");
}

fn sets(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_set_becomes_a_nested_yaml_document_with_the_value_verbatim() {
    assert_eq!(set_document("seed=5").unwrap(), "seed: 5\n");
    assert_eq!(
        set_document("memory.ram=1GiB").unwrap(),
        "memory:\n  ram: 1GiB\n"
    );
    assert_eq!(
        set_document("a.b.c=value").unwrap(),
        "a:\n  b:\n    c: value\n"
    );
    assert_eq!(
        set_document("kernel.patches=[dm-crypt-unplug, force-highorder]").unwrap(),
        "kernel:\n  patches: [dm-crypt-unplug, force-highorder]\n"
    );
    assert_eq!(
        set_document("description=\"a: b # c\"").unwrap(),
        "description: \"a: b # c\"\n"
    );
    // Split at the first `=`; spaces around the path and the value are dropped.
    assert_eq!(
        set_document(" description = x=y ").unwrap(),
        "description: x=y\n"
    );
    assert_eq!(
        set_document("crypt.cipher=null").unwrap(),
        "crypt:\n  cipher: null\n"
    );
}

#[test]
fn a_malformed_set_is_a_syntax_error_naming_the_argument() {
    for (arg, message) in [
        ("=1", "no field path before `=`"),
        ("a..b=1", "empty field name in `a..b`"),
        (".a=1", "empty field name in `.a`"),
        ("a.=1", "empty field name in `a.`"),
        ("memory.ram", "expected path.to.field=value, found no `=`"),
        (
            "policies[0]=fifo",
            "`policies[0]` indexes `policies`, which is not a list --set can index",
        ),
        ("a b=1", "`a b` is not a field name"),
        ("memory.ram=", "no value after `memory.ram=`"),
        ("seed=~", "no value after `seed=`"),
        ("seed=# five", "no value after `seed=`"),
        ("seed=1\nname: x", "the value spans several lines"),
    ] {
        let e = set_document(arg).expect_err(arg);
        assert_eq!(e.kind(), ErrorKind::Syntax, "{arg}");
        assert_eq!(e.file(), format!("--set {arg}"));
        assert_eq!((e.line(), e.message()), (None, message), "{arg}");
        assert!(e.hint().is_some());
        assert_eq!(e.exit_code(), 2);
        let e = load_str_with_overrides("x.yaml", BASE, &sets(&[arg])).unwrap_err();
        assert_eq!(e.message(), message, "{arg}");
    }
}

#[test]
fn sets_merge_over_the_file_in_order() {
    let s = load_str_with_overrides(
        "x.yaml",
        &format!("{BASE}seed: 3\ncpus: 2\nkernel: {{ hz: 1000 }}\n"),
        &sets(&[
            "seed=7",
            "kernel.version=2.6.30",
            "kernel.patches=[dm-crypt-unplug]",
            "memory.ram=1GiB",
            "replications=4",
            "seed=8",
            "name='my run'",
        ]),
    )
    .unwrap();
    assert_eq!(
        (s.seed, s.cpus, s.kernel.hz),
        (8, 2, 1000),
        "last wins; rest kept"
    );
    assert_eq!(s.kernel.version, KernelVersion::V2_6_30);
    assert_eq!(s.kernel.patches, ["dm-crypt-unplug"]);
    assert_eq!(s.crypt.io_queues, IoQueues::MasonV3);
    assert_eq!(s.memory.map(|m| m.ram), Some(1 << 30));
    assert_eq!((s.replications, s.name.as_str()), (4, "my run"));
    // A device of another kind replaces the file's whole.
    let s = load_str_with_overrides(
        "x.yaml",
        "device: { kind: hdd5400, seek_min: 3ms }\nworkloads: [{ kind: fio }]\n",
        &sets(&["device.kind=nvme"]),
    )
    .unwrap();
    assert!(matches!(s.device, DeviceConfig::Nvme(_)));
}

const VARIANTS: &str = "device: { kind: nvme }\nworkloads: [{ kind: fio }]\ncpus: 2\n\
                        kernel: { version: 2.6.31 }\nvariants:\n  - name: old\n    \
                        set: { kernel: { version: 2.6.30 }, cpus: 3, replications: 5 }\n  \
                        - name: plain\n    set: { cpus: 4 }\n";

#[test]
fn precedence_is_file_then_variant_set_then_the_command_line() {
    let s = load_str("x.yaml", VARIANTS).unwrap();
    let [old, plain] = &s.variants[..] else {
        panic!("two variants")
    };
    assert_eq!((s.cpus, s.replications), (2, 10));
    assert_eq!((old.scenario.cpus, old.scenario.replications), (3, 5));
    assert_eq!(old.scenario.kernel.version, KernelVersion::V2_6_30);
    assert_eq!(plain.scenario.kernel.version, KernelVersion::V2_6_31);
    let s = load_str_with_overrides(
        "x.yaml",
        VARIANTS,
        &sets(&["kernel.version=2.6.37", "replications=7"]),
    )
    .unwrap();
    for sc in std::iter::once(&s).chain(s.variants.iter().map(|v| &*v.scenario)) {
        assert_eq!(sc.kernel.version, KernelVersion::V2_6_37, "--set wins");
        assert_eq!(sc.replications, 7);
    }
    let cpus: Vec<u32> = s.variants.iter().map(|v| v.scenario.cpus).collect();
    assert_eq!((s.cpus, cpus), (2, vec![3, 4]), "what --set leaves alone");
}

#[test]
fn an_error_in_a_set_value_names_the_argument_not_the_file() {
    let e = load_str_with_overrides(
        "x.yaml",
        BASE,
        &sets(&["seed=1", "memory.ram=1GB", "cpus=2"]),
    )
    .unwrap_err();
    assert_eq!(e.file(), "--set memory.ram=1GB");
    assert_eq!(
        (e.line(), e.column(), e.path()),
        (None, None, Some("memory.ram"))
    );
    assert!(e.hint().is_some());
    let shown = e.to_string();
    assert!(
        shown.starts_with("--set memory.ram=1GB: memory.ram: must be a whole number"),
        "{shown}"
    );
    assert!(!shown.contains(" | "), "no source line: {shown}");
    // A serde error (a unit, a field name) names it as well, with the same hints as a file.
    let e = load_str_with_overrides("x.yaml", BASE, &sets(&["memory.ram=banana"])).unwrap_err();
    assert_eq!(
        (e.file(), e.path()),
        ("--set memory.ram=banana", Some("memory.ram"))
    );
    assert_eq!(e.hint(), Some(units::SIZE_HINT));
    let e = load_str_with_overrides("x.yaml", BASE, &sets(&["memory.rm=1GiB"])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownField);
    assert_eq!((e.file(), e.line()), ("--set memory.rm=1GiB", None));
    assert!(e.hint().unwrap().starts_with("did you mean `ram`?"), "{e}");
    let e = load_str_with_overrides("x.yaml", BASE, &sets(&["sede=1"])).unwrap_err();
    assert!(e.hint().unwrap().contains("`seed`"), "{e}");
    let e = load_str_with_overrides("x.yaml", BASE, &sets(&["policies=[fifo"])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_eq!(e.hint(), Some(SET_VALUE_HINT));
    // In a variant too, and whichever of several --sets wrote it.
    let e = load_str_with_overrides(
        "x.yaml",
        VARIANTS,
        &sets(&["cpus=2", "kernel.patches=[dm-crypt-unplug, nope]"]),
    )
    .unwrap_err();
    assert_eq!(e.file(), "--set kernel.patches=[dm-crypt-unplug, nope]");
    assert_eq!(e.path(), Some("kernel.patches[1]"));
}

#[test]
fn a_file_value_that_a_set_makes_wrong_keeps_its_line_and_names_the_set() {
    let text = format!("{BASE}warmup: 2s\n");
    let e = load_str_with_overrides("x.yaml", &text, &sets(&["duration=1s"])).unwrap_err();
    assert_eq!(
        (e.file(), e.line(), e.path()),
        ("x.yaml", Some(4), Some("warmup"))
    );
    assert!(
        e.message()
            .starts_with("with --set duration=1s: the warm-up"),
        "{e}"
    );
    // Without overrides nothing changes.
    let e = load_str("x.yaml", &format!("{text}duration: 1s\n")).unwrap_err();
    assert!(e.message().starts_with("the warm-up"), "{e}");
}

#[test]
fn replications_default_to_ten_and_are_checked() {
    assert_eq!(load_str("x.yaml", BASE).unwrap().replications, 10);
    let s = load_str("x.yaml", &format!("{BASE}replications: 1000\n")).unwrap();
    assert_eq!(s.replications, MAX_REPLICATIONS);
    for bad in ["0", "1001"] {
        let e = err(&format!("{BASE}replications: {bad}\n"));
        assert_eq!(
            (e.kind(), e.path(), e.line()),
            (ErrorKind::BadValue, Some("replications"), Some(4))
        );
        assert!(e.hint().unwrap().contains("1 to 1000"), "{e}");
    }
    let e = err(&format!("{BASE}replications: -1\n"));
    assert_eq!(e.path(), Some("replications"));
    let e = err(&VARIANTS.replace("replications: 5", "replications: 0"));
    assert_eq!(e.path(), Some("variants[0].set.replications"));
}

#[test]
fn type_mismatches_echo_the_value() {
    let e = err(&format!("{BASE}cpus: -2\n"));
    assert_eq!(
        e.message(),
        "expected a whole number from 1 to 1024, got \"-2\""
    );
    assert_eq!(e.path(), Some("cpus"));
    let e = err(&format!("{BASE}crypt: {{ unplug_after_submit: maybe }}\n"));
    assert!(e.message().contains("true or false"), "{e}");
}

#[test]
fn a_whole_number_of_the_wrong_type_is_hinted_with_the_fields_own_range() {
    // Issue 11 case 11: `cpus: -1` and `cpus: 4294967296` hinted 0 to 4294967295.
    for bad in ["-1", "4294967296"] {
        let e = err(&format!("{BASE}cpus: {bad}\n"));
        assert_eq!(
            e.message(),
            format!("expected a whole number from 1 to 1024, got \"{bad}\"")
        );
        assert_eq!(
            e.hint(),
            Some("write a whole number from 1 to 1024, without a unit")
        );
        let e = err(&format!("{BASE}cpus: 1025\n"));
        assert!(e.message().contains("between 1 and 1024"), "{e}");
    }
    for (field, range) in [
        ("workloads:\n  - kind: fio\n    iodepth", "from 1 to 65536"),
        ("workloads:\n  - kind: fio\n    rwmixread", "from 0 to 100"),
        (
            "workloads:\n  - kind: fio\n    number_ios",
            "from 1 to 18446744073709551615",
        ),
        ("block:\n  nr_requests", "from 4 to 100000"),
        (
            "memory:\n  ram: 1GiB\n  atomic:\n    - rate: 5/s\n      burst",
            "from 1 to 100000",
        ),
        (
            "memory:\n  ram: 1GiB\n  min_free_kbytes",
            "from 128 to ram/32 (in kB)",
        ),
        ("replications", "from 1 to 1000"),
        ("seed", "from 0 to 18446744073709551615"),
    ] {
        let e = err(&format!(
            "device: {{ kind: nvme }}\n{field}: -1\nworkloads: [{{kind: fio}}]\n"
        )
        .replace("workloads: [{kind: fio}]\nworkloads", "workloads"));
        assert!(e.hint().unwrap().contains(range), "{field}: {e}");
    }
    let e = err(&format!("{BASE}kernel: {{ hz: -1 }}\n"));
    assert_eq!(
        e.hint(),
        Some("write one of 100, 250, 300, 1000 (CONFIG_HZ)")
    );
    // Inside a variant's `set:` and in a --set, the same range.
    let e = err(&VARIANTS.replace("cpus: 4 }", "cpus: -1 }"));
    assert_eq!(e.path(), Some("variants[1].set.cpus"));
    assert!(e.message().contains("from 1 to 1024"), "{e}");
    let e = load_str_with_overrides("x.yaml", BASE, &sets(&["cpus=-1"])).unwrap_err();
    assert!(e.message().contains("from 1 to 1024"), "{e}");
    assert_eq!(
        field_key("variants[12].set.workloads[3].think.kind"),
        "workloads[].think.kind"
    );
    assert_eq!(field_key("memory.atomic[0].burst"), "memory.atomic[].burst");
    assert_eq!(field_key("cpus"), "cpus");
}

#[test]
fn a_distribution_kind_is_not_called_a_workload_kind() {
    let e = err(
        "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    think: { kind: normal, mean: 1ms }\n",
    );
    assert_eq!(e.message(), "unknown distribution kind `normal`");
    assert!(e.hint().unwrap().contains("exponential"), "{e}");
    let e = err(&format!(
        "{BASE}variants:\n  - name: a\n    set: {{ workloads: [{{ kind: fiio }}] }}\n"
    ));
    assert_eq!(e.message(), "unknown workload kind `fiio`");
}

#[test]
fn a_breached_yaml_budget_is_said_in_words_with_no_long_line() {
    // Issue 11 case 11: `budget breached: Nodes { nodes: 250001 }`, an indentation hint and
    // the whole multi-megabyte line echoed.
    let values = "1ms, ".repeat(MAX_YAML_NODES);
    let text = format!("{BASE}crypt: {{ cost: {{ kind: empirical, values: [{values}] }} }}\n");
    let e = err(&text);
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert!(
        e.message()
            .starts_with("the file holds more than 250000 YAML values"),
        "{}",
        e.message()
    );
    assert!(!e.message().contains("Nodes"), "{e}");
    let hint = e.hint().unwrap();
    assert!(
        hint.contains("at most 100000 values") && !hint.contains("indentation"),
        "{hint}"
    );
    let shown = e.to_string();
    assert!(
        shown
            .lines()
            .all(|l| l.chars().count() <= MAX_ECHO_CHARS + 20),
        "{shown}"
    );
    assert!(shown.len() < 2000, "{} chars", shown.len());
}

#[test]
fn an_empirical_list_longer_than_its_documented_limit_says_the_limit() {
    let values = "1ms, ".repeat(MAX_EMPIRICAL_VALUES + 1);
    let e = err(&format!(
        "{BASE}crypt: {{ cost: {{ kind: empirical, values: [{values}] }} }}\n"
    ));
    assert_eq!(e.path(), Some("crypt.cost.values"));
    assert_eq!(e.message(), "needs 1 to 100000 values, got 100001");
    let values = "1ms, ".repeat(MAX_EMPIRICAL_VALUES);
    load_str(
        "x.yaml",
        &format!("{BASE}crypt: {{ cost: {{ kind: empirical, values: [{values}] }} }}\n"),
    )
    .unwrap();
}

#[test]
fn a_second_document_is_named_in_the_users_words() {
    let e = err(&format!("{BASE}---\nname: other\n"));
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert!(
        e.message().contains("a scenario file holds one document"),
        "{e}"
    );
    assert!(e.hint().unwrap().contains("remove the `---` line"), "{e}");
    assert!(!e.to_string().contains("from_str_multiple"), "{e}");
}

#[test]
fn long_values_and_lines_are_echoed_shortened() {
    let long = "k".repeat(1 << 20);
    for text in [
        format!("device: {{ kind: nvme }}\nworkloads:\n  - kind: fio\n    bs: 4{long}\n"),
        format!("{BASE}{long}: 1\n"),
        format!("{BASE}cpus: {long}\n"),
        format!("{BASE}policies: [{long}]\n"),
        format!("{BASE}duration: 1{long}\n"),
        format!("{BASE}device: {{ kind: {long} }}\n"),
        format!("{BASE}name: [{long}\n"),
    ] {
        let shown = err(&text).to_string();
        assert!(
            shown.len() < 2500,
            "{} chars: {}",
            shown.len(),
            &shown[..300]
        );
        // At most MAX_ECHO_CHARS of the value, plus the place and our own words.
        for line in shown.lines() {
            assert!(line.chars().count() <= MAX_ECHO_CHARS + 150, "{line}");
        }
    }
}

#[test]
fn a_long_line_is_shown_as_a_window_with_the_caret_under_the_column() {
    let line = format!("{}X{}", "a".repeat(1000), "b".repeat(1000));
    let (shown, caret) = line_window(&line, 1001);
    assert_eq!(shown.chars().count(), MAX_ECHO_CHARS);
    assert_eq!(shown.chars().nth(caret as usize - 1), Some('X'));
    let (shown, caret) = line_window(&line, 1);
    assert!(shown.starts_with('a') && shown.ends_with('…'));
    assert_eq!(caret, 1);
    let (shown, caret) = line_window(&line, 2001);
    assert!(shown.starts_with('…') && shown.ends_with('b'));
    assert_eq!(shown.chars().nth(caret as usize - 1), Some('b'));
    assert_eq!(line_window("short", 3), ("short".to_string(), 3));
}

/// A fresh path in the temporary directory for this test.
fn temp_path(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("qsim-scenario-{}-{tag}", std::process::id()))
}

#[test]
fn reads_are_capped_by_bytes_read_not_by_reported_size() {
    let path = temp_path("cap");
    std::fs::write(&path, vec![b'#'; 1000]).unwrap();
    assert_eq!(read_capped(&path, 1000).unwrap().len(), 1000);
    let e = read_capped(&path, 999).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
    std::fs::remove_file(&path).unwrap();
    // A device reports size 0 and never ends (issue 11 case 8: `qsim run /dev/zero`).
    let zero = Path::new("/dev/zero");
    if zero.exists() {
        let e = read_capped(zero, 4096).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        let e = load(zero).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Read);
        assert!(
            e.message()
                .starts_with("the file holds more than 16MiB (16777216 bytes)"),
            "{e}"
        );
    }
    let e = read_capped(Path::new(env!("CARGO_MANIFEST_DIR")), 10).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory);
}
