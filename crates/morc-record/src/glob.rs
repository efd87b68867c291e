//! Signal patterns such as `robot.q*`, `ff.tau` or `*.y`, matched against
//! "component.port" names: `*` is any run of characters (none included),
//! `?` is exactly one.

use morc_kernel::ValueType;

/// Whether `name` matches `pattern` as a whole.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative matching with one backtrack point: linear in practice and
    // without the exponential blow-up of naive recursion on many '*'.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            // Let the last '*' absorb one more character.
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The indices into `available` of the signals the patterns select: pattern
/// by pattern, each in the order of `available`, every signal once (at its
/// first match). A pattern that selects nothing is an error naming it.
pub fn expand_indices(patterns: &[&str], available: &[(String, ValueType, String)]) -> Result<Vec<usize>, String> {
    let mut chosen: Vec<usize> = Vec::new();
    for pattern in patterns {
        let mut any = false;
        for (i, (name, _, _)) in available.iter().enumerate() {
            if matches(pattern, name) {
                any = true;
                if !chosen.contains(&i) {
                    chosen.push(i);
                }
            }
        }
        if !any {
            let names: Vec<&str> = available.iter().map(|(n, _, _)| n.as_str()).collect();
            let list = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return Err(format!("record pattern '{pattern}' matches no signal (signals: {list})"));
        }
    }
    Ok(chosen)
}

/// The signals (name, type, unit) the patterns select, in the order of
/// [`expand_indices`].
pub fn expand(patterns: &[&str], available: &[(String, ValueType, String)]) -> Result<Vec<(String, ValueType, String)>, String> {
    Ok(expand_indices(patterns, available)?.into_iter().map(|i| available[i].clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_question_marks() {
        assert!(matches("robot.q*", "robot.q"));
        assert!(matches("robot.q*", "robot.qd"));
        assert!(!matches("robot.q*", "robot.tau"));
        assert!(matches("*.y", "fb.y"));
        assert!(!matches("*.y", "fb.yy"));
        assert!(matches("ff.tau", "ff.tau"));
        assert!(!matches("ff.tau", "ff.tau2"));
        assert!(matches("g?.y", "g1.y"));
        assert!(!matches("g?.y", "g12.y"));
        assert!(matches("*", "anything.at_all"));
        assert!(matches("*a*b*c", "xxaxxbxxbxc"));
        assert!(!matches("*a*b*c", "xxaxxbxx"));
        assert!(matches("**", ""));
        assert!(!matches("?", ""));
    }

    fn signals() -> Vec<(String, ValueType, String)> {
        [("robot.q", ValueType::Vector(6), "rad"), ("robot.qd", ValueType::Vector(6), "rad/s"), ("ff.tau", ValueType::Vector(6), "N m"), ("fb.y", ValueType::Real, ""), ("ff.y", ValueType::Real, "")]
            .iter()
            .map(|(n, t, u)| (n.to_string(), *t, u.to_string()))
            .collect()
    }

    #[test]
    fn expansion_is_ordered_and_without_duplicates() {
        let s = signals();
        let names = |r: Vec<(String, ValueType, String)>| r.into_iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(names(expand(&["*.y", "robot.q*", "fb.y"], &s).unwrap()), ["fb.y", "ff.y", "robot.q", "robot.qd"]);
        assert_eq!(names(expand(&["ff.tau"], &s).unwrap()), ["ff.tau"]);
        assert_eq!(expand(&["ff.tau"], &s).unwrap()[0], ("ff.tau".to_string(), ValueType::Vector(6), "N m".to_string()));
    }

    #[test]
    fn a_pattern_matching_nothing_is_named() {
        let e = expand(&["robot.q", "tarj.*"], &signals()).unwrap_err();
        assert!(e.contains("'tarj.*' matches no signal"), "{e}");
        assert!(e.contains("robot.qd"), "lists what exists: {e}");
    }
}
