//! `morc check` as a user runs it: it passes every shipped example and
//! correct programs (runs give them real results, on the simulation), and
//! fails broken ones — a typo'd field, a skill whose precondition fails, a
//! target out of reach — saying what and where. Nothing real moves and no
//! recording is left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("morc-cli-check-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `morc check FILES…` run in `cwd`: (exit code, stdout + stderr).
fn check(cwd: &Path, files: &[&Path]) -> (i32, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_morc")).current_dir(cwd).arg("check").args(files).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

fn write(dir: &Path, name: &str, code: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, code).unwrap();
    path
}

#[test]
fn every_shipped_example_passes() {
    let cwd = scratch("examples");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&examples).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "lua")).collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (code, text) = check(&cwd, &refs);
    println!("{text}");
    assert_eq!(code, 0, "{text}");
    for f in &files {
        assert!(text.contains(&format!("{}: OK", f.display())), "{}: {text}", f.display());
    }
    // The skills ran on the simulated robot, as in `morc run` (not "precondition failed: attempt to index a nil value").
    assert!(text.contains("ptp ✓") && text.contains("path ✓") && text.contains("home ✓"), "{text}");
    assert!(!text.contains("attempt to"), "{text}");
    // The experiment's results are real: feed-forward helps.
    assert!(text.contains("feed-forward reduces the peak tracking error"), "{text}");
    // Recorded runs, pictures and saved files went to the check's scratch folder, which is gone.
    let left: Vec<_> = std::fs::read_dir(&cwd).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "morc check left {left:?} in {}", cwd.display());
    let _ = std::fs::remove_dir_all(&cwd);
}

/// A user's edited points file where they check the teaching example is left as it was, and the
/// example writes nothing into the working directory (its points, pictures and recordings go to
/// the check's scratch folder).
#[test]
fn checking_an_example_leaves_the_users_files_alone() {
    let cwd = scratch("users_files");
    let mine = "# my points, edited by hand\nP1, 90, 400, -60, 400, 60\n";
    std::fs::write(cwd.join("taught_points.csv"), mine).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/direct_teaching.lua");
    let (code, text) = check(&cwd, &[&example]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(std::fs::read_to_string(cwd.join("taught_points.csv")).unwrap(), mine, "{text}");
    let files: Vec<_> = std::fs::read_dir(&cwd).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files, ["taught_points.csv"], "{text}");
    // A program's own saves (morc.write_new, as points.save, robot:save_calibration and id:save
    // take their names) go to the scratch folder too.
    let program = write(&cwd, "saves.lua", "print('saved to ' .. morc.write_new('result.txt', 'hello'))\n");
    let (code, text) = check(&cwd, &[&program]);
    assert_eq!(code, 0, "{text}");
    assert!(!cwd.join("result.txt").exists() && text.contains("morc-check-"), "{text}");
    let _ = std::fs::remove_dir_all(&cwd);
}

const ROBOT: &str = "local kr16 = require \"robots.kr16\"\nmorc.use_robot(kr16, { q0 = kr16.home })\nmorc.lib.use \"motion\"\nlocal p = kr16:fk(kr16.home)\n";

const PROBE: &str = "local a = morc.assembly { \"probe\", duration = 0.01 }\n\
a:add(\"s\", \"sine\", { amplitude = 1, frequency = 1 })\n\
a:add(\"p\", \"probe\")\n\
a:connect(\"s.y\", \"p.u\")\n\
local r = morc.engine:run(a)\n";

const GRIP: &str = "local grip = morc.skill { name = \"grip\", doc = \"closes the gripper\",\n\
  precondition = function(ctx, p) return false, \"the gripper is not open\" end,\n\
  execute = function(ctx, p) end }\n";

#[test]
fn correct_programs_pass() {
    let dir = scratch("correct");
    let files = [
        // A run's results, read as in `morc run`.
        write(&dir, "results.lua", &format!("{PROBE}assert(#r.data[\"p.u\"] == 10)\nprint(r.data[\"p.u\"][2])\n")),
        // A failure the program handles.
        write(&dir, "handled.lua", &format!("{GRIP}local r = grip()\nif not r.ok then print(\"not gripping: \" .. r.reason) end\n")),
        // A motion that arrives.
        write(&dir, "reach.lua", &format!("{ROBOT}local r = lin {{ pos = {{ p.pos[1], p.pos[2] + 50, p.pos[3] }}, rpy = p.rpy }}\nprint(r)\n")),
    ];
    for f in &files {
        let (code, text) = check(&dir, &[f]);
        assert_eq!(code, 0, "{}: {text}", f.display());
        assert!(text.contains(&format!("{}: OK", f.display())), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn broken_programs_fail_with_the_message() {
    let dir = scratch("broken");
    let cases = [
        (write(&dir, "typo.lua", &format!("{PROBE}print(r.data[\"p.y\"][1])\n")), vec!["typo.lua:6: attempt to index a nil value (field 'p.y')"]),
        (
            write(&dir, "precondition.lua", &format!("{GRIP}grip()\nprint(\"the program went on\")\n")),
            vec!["precondition.lua:4: grip ✗", "precondition: the gripper is not open", "did not look at this result"],
        ),
        (
            write(&dir, "unreachable.lua", &format!("{ROBOT}lin {{ pos = {{ p.pos[1] + 3000, p.pos[2], p.pos[3] }}, rpy = p.rpy }}\nhome()\n")),
            vec!["unreachable.lua:5: lin ✗", "is out of reach", "did not look at this result"],
        ),
        (
            write(&dir, "skill_bug.lua", "local grip = morc.skill { name = \"grip\", doc = \"closes the gripper\",\n  precondition = function(ctx, p) return ctx.gripper.open end,\n  execute = function(ctx, p) end }\nprint(grip())\n"),
            vec!["skill_bug.lua:4: grip ✗", "skill_bug.lua:2: attempt to index a nil value (field 'gripper')"],
        ),
        (
            write(
                &dir,
                "fault.lua",
                "local broken = morc.component { name = \"broken\", outputs = { \"y\" },\n  step = function(self, inp, out, t) if t >= 0.005 then error(\"sensor out of range\") end end }\n\
                 local a = morc.assembly { \"faulting\", duration = 1 }\na:add(\"b\", broken)\nprint(morc.engine:run(a).outcome)\n",
            ),
            vec!["last run ended in a fault"],
        ),
    ];
    for (file, expected) in &cases {
        let (code, text) = check(&dir, &[file]);
        println!("{text}");
        assert_eq!(code, 1, "{}: {text}", file.display());
        assert!(text.contains(&format!("{}: FAILED", file.display())), "{text}");
        for e in expected {
            assert!(text.contains(e), "{}: expected {e:?} in:\n{text}", file.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program for `morc --ros run` is checked without joining ROS 2 (a check touches no network):
/// its topic components run with their subscriptions silent, `morc.ros.start()` joins nothing,
/// and what cannot work without a network (serving MoveIt's goals) fails saying why.
#[test]
fn ros_programs_are_checked_without_joining_ros2() {
    let cwd = scratch("ros");
    let topics = write(
        &cwd,
        "topics.lua",
        r#"
local kr16 = require "robots.kr16"
morc.use_robot(kr16, { q0 = kr16.home })
print(morc.ros.start())
assert(morc.ros.status() == nil, "on ROS 2 under morc check")
local a = morc.assembly { "topics" }
a:add("cmd", "ros.subscribe", { topic = "/cmd", type = "std_msgs/msg/Float64", stale = "hold" })
a:add("g", "gain", { k = 2 })
a:connect("cmd.data", "g.u")
a:add("out", "ros.publish", { topic = "/out", type = "sensor_msgs/msg/JointState" })
a:connect("robot.q", "out.position")
a.duration = 0.1
local r = morc.engine:run(a)
assert(r.ok and r.data["cmd.received"] == 0, "a silent subscription")
local h = morc.ros.topic_based_control { duration = 0.5 }
assert(h.ok and h.data["traj.samples"] == 0, "no command came")
"#,
    );
    let (code, text) = check(&cwd, &[&topics]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("not joining ROS 2") && text.contains("topics.lua: OK"), "{text}");
    let serve = write(&cwd, "serve.lua", "local kr16 = require \"robots.kr16\"\nmorc.use_robot(kr16)\nmorc.ros.follow_joint_trajectory { goals = 1 }\n");
    let (code, text) = check(&cwd, &[&serve]);
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("serve.lua:3") && text.contains("morc check joins no ROS 2 network"), "{text}");
    let _ = std::fs::remove_dir_all(&cwd);
}
