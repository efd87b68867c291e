//! Fuzzing the URDF parser (`morc_model::parse_urdf`), which reads files from anywhere: no
//! input panics or hangs, and a model it accepts can be checked, run through the dynamics and
//! written back without panicking. Inputs: well-formed robots with hostile values (NaN, ∞,
//! negative and huge numbers, dangling and cyclic links, unknown joint types), the same with
//! bytes flipped, cut or inserted, and raw bytes.
//!
//! Briefly in `cargo test`; at length:
//! `MORC_FUZZ_CASES=200000 cargo test --release --test fuzz_urdf -- --nocapture`.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("MORC_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(1500)
}

/// A number as URDF text: ordinary values most of the time, else what breaks parsers.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        40 => (-3.0f64..3.0).prop_map(|x| format!("{x}")),
        1 => prop::sample::select(vec!["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e-320", "0", "-0", "", " ", "1 2", "0x10", "1e", "+", "٣"])
            .prop_map(str::to_string),
        1 => any::<f64>().prop_map(|x| format!("{x}")),
    ]
}

fn triple() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => (number(), number(), number()).prop_map(|(a, b, c)| format!("{a} {b} {c}")),
        1 => prop::sample::select(vec!["", "0 0", "0 0 0 0", "a b c", "0 0 1"]).prop_map(str::to_string),
    ]
}

/// Six inertia entries: mostly a body's (moments that satisfy the triangle inequality), else any.
fn moments() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        8 => (0.01f64..1.0, 0.01f64..1.0, 0.0f64..1.0).prop_map(|(a, b, t)| {
            let c = (a - b).abs() + t * (a + b - (a - b).abs());
            [a, 0.0, 0.0, b, 0.0, c].iter().map(|x| x.to_string()).collect()
        }),
        1 => prop::collection::vec(number(), 6),
    ]
}

fn inertial() -> impl Strategy<Value = String> {
    (prop_oneof![8 => (0.0f64..10.0).prop_map(|m| m.to_string()), 1 => number()], moments(), triple(), 0..8u8).prop_map(|(mass, i, xyz, shape)| match shape {
        0 => String::new(),
        1 => format!(r#"<inertial><mass value="{mass}"/></inertial>"#),
        _ => format!(
            r#"<inertial><origin xyz="{xyz}" rpy="0 0 0"/><mass value="{mass}"/><inertia ixx="{}" ixy="{}" ixz="{}" iyy="{}" iyz="{}" izz="{}"/></inertial>"#,
            i[0], i[1], i[2], i[3], i[4], i[5]
        ),
    })
}

/// A robot: `n` links named l0.., joints between random links (so trees, forests, cycles and
/// dangling names all occur).
fn robot() -> impl Strategy<Value = String> {
    (1..7usize)
        .prop_flat_map(|n| {
            let links = prop::collection::vec(inertial(), n);
            // Mostly a tree (joint j hangs link j + 1 under an earlier link), sometimes any pair.
            let joint = (
                prop_oneof![
                    20 => prop::sample::select(vec!["revolute", "continuous", "prismatic", "fixed"]),
                    1 => prop::sample::select(vec!["floating", "planar", "ball", ""]),
                ],
                any::<prop::sample::Index>(),
                prop_oneof![10 => Just(None), 1 => (0..n + 1).prop_map(Some)],
                triple(),
                triple(),
                triple(),
                (number(), number(), number(), number()),
                (prop::bool::weighted(0.9), prop::bool::weighted(0.9), prop::bool::weighted(0.05)),
            );
            (links, prop::collection::vec(joint, 0..n + 1))
        })
        .prop_map(|(links, joints)| {
            let mut xml = String::from("<?xml version=\"1.0\"?>\n<robot name=\"fuzz\">\n");
            for (i, inertial) in links.iter().enumerate() {
                xml += &format!("<link name=\"l{i}\">{inertial}</link>\n");
            }
            for (j, (kind, parent, other, xyz, rpy, axis, (lo, hi, effort, vel), (has_axis, has_limit, mimic))) in joints.iter().enumerate() {
                let (parent, child) = match other {
                    None => (parent.index(j + 1), j + 1),
                    Some(child) => (parent.index(links.len() + 1), *child),
                };
                xml += &format!("<joint name=\"j{j}\" type=\"{kind}\"><parent link=\"l{parent}\"/><child link=\"l{child}\"/><origin xyz=\"{xyz}\" rpy=\"{rpy}\"/>");
                if *has_axis {
                    xml += &format!("<axis xyz=\"{axis}\"/>");
                }
                if *has_limit {
                    xml += &format!("<limit lower=\"{lo}\" upper=\"{hi}\" effort=\"{effort}\" velocity=\"{vel}\"/><dynamics damping=\"{lo}\" friction=\"{hi}\"/>");
                }
                if *mimic {
                    xml += "<mimic joint=\"j0\"/>";
                }
                xml += "</joint>\n";
            }
            xml + "</robot>\n"
        })
}

/// `text` with a few bytes flipped, cut out or inserted (lossily back to text, as a file read
/// as UTF-8 would fail or pass).
fn mutated() -> impl Strategy<Value = String> {
    (robot(), prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..4)).prop_map(|(text, edits)| {
        let mut bytes = text.into_bytes();
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => {
                    bytes.remove(i);
                }
                _ => bytes.insert(i, byte),
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

static INPUTS: AtomicUsize = AtomicUsize::new(0);
static ACCEPTED: AtomicUsize = AtomicUsize::new(0);

/// What a user's file goes through: parse, then the checks and algorithms a robot runs.
fn exercise(text: &str) {
    INPUTS.fetch_add(1, Ordering::Relaxed);
    let Ok(model) = morc_model::parse_urdf(text, "fuzz.urdf") else { return };
    ACCEPTED.fetch_add(1, Ordering::Relaxed);
    let _ = model.check_mass_matrix();
    let mut data = morc_model::Data::new(&model);
    let q: Vec<f64> = model.limits().iter().map(|l| 0f64.clamp(l.lower.min(l.upper), l.upper.max(l.lower))).collect();
    let zeros = vec![0.0; model.nv()];
    let _ = morc_model::rnea(&model, &mut data, &q, &zeros, &zeros);
    let _ = morc_model::crba(&model, &mut data, &q);
    let _ = morc_model::aba(&model, &mut data, &q, &zeros, &zeros);
    // What it writes back must read back.
    let again = morc_model::to_urdf(&model);
    let back = morc_model::parse_urdf(&again, "again.urdf");
    assert!(back.is_ok(), "to_urdf wrote what parse_urdf refuses: {:?}\n{again}", back.err());
}

fn run(strategy: impl Strategy<Value = String>, cases: u32) {
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&strategy, |text| {
            exercise(&text);
            Ok(())
        })
        .unwrap();
}

#[test]
fn no_urdf_input_panics() {
    let n = cases();
    run(robot(), n);
    run(mutated(), n);
    run(prop::collection::vec(any::<u8>(), 0..400).prop_map(|b| String::from_utf8_lossy(&b).into_owned()), n / 4 + 1);
    // Long chains: up to the limit they parse (no recursion limit), beyond it they are refused.
    let chain = |n: usize| {
        let mut chain = String::from("<robot name=\"chain\"><link name=\"l0\"/>");
        for i in 1..=n {
            chain += &format!(
                "<link name=\"l{i}\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.1\" iyz=\"0\" izz=\"0.1\"/></inertial></link><joint name=\"j{i}\" type=\"revolute\"><parent link=\"l{}\"/><child link=\"l{i}\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>",
                i - 1
            );
        }
        chain + "</robot>"
    };
    exercise(&chain(morc_model::MAX_MOVING_JOINTS));
    let e = morc_model::parse_urdf(&chain(morc_model::MAX_MOVING_JOINTS + 1), "long.urdf").unwrap_err().to_string();
    assert!(e.contains("long.urdf") && e.contains("at most 1024"), "{e}");
    exercise(&format!("{}{}", "<a>".repeat(5000), "</a>".repeat(5000)));
    eprintln!("fuzz urdf: {} inputs ({} parsed to a model)", INPUTS.load(Ordering::Relaxed), ACCEPTED.load(Ordering::Relaxed));
}
