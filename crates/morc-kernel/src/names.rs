//! Names someone typed against the names morc knows: the one "unknown key, did you mean"
//! message every layer uses (robot definitions, assemblies, component parameters, skill
//! arguments), so a typo reads the same wherever it is made.

/// The known name nearest to `name` when it is close enough to be a typo (a few letters
/// changed, added, dropped or swapped, or another case), else `None`.
pub fn nearest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    // A typo changes at most about a third of a word: "sped" → "speed", not "q" → "n".
    let len = name.chars().count();
    let allowed = if len < 3 { 0 } else { (len / 3).max(1) };
    known.into_iter().map(|k| (distance(&lower, &k.to_lowercase()), k)).filter(|&(d, _)| d <= allowed).min_by_key(|&(d, k)| (d, k.len())).map(|(_, k)| k)
}

/// "unknown key 'sped' in ptp's options; did you mean 'speed'?", or with the known keys
/// listed when none is near. `place` says where the key was given, with its preposition
/// ("in ptp's options", "of gain").
pub fn unknown(what: &str, name: &str, place: &str, known: &[&str]) -> String {
    match nearest(name, known.iter().copied()) {
        Some(near) => format!("unknown {what} '{name}' {place}; did you mean '{near}'?"),
        None if known.is_empty() => format!("unknown {what} '{name}' {place}: it takes none"),
        None => {
            let mut sorted = known.to_vec();
            sorted.sort_unstable();
            format!("unknown {what} '{name}' {place}; known: {}", sorted.join(", "))
        }
    }
}

/// Optimal string alignment distance: edits (insert, delete, substitute, swap two neighbours)
/// that turn `a` into `b`.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_word() {
        let known = ["speed", "acc", "ramp", "tolerance"];
        assert_eq!(nearest("sped", known), Some("speed"));
        assert_eq!(nearest("spede", known), Some("speed"));
        assert_eq!(nearest("Speed", known), Some("speed"));
        assert_eq!(nearest("tolerence", known), Some("tolerance"));
        assert_eq!(nearest("mode", known), None);
        assert_eq!(nearest("x", ["y", "n"]), None);
    }

    #[test]
    fn the_message_names_the_key_the_place_and_the_nearest() {
        assert_eq!(unknown("key", "sped", "in ptp's options", &["speed", "acc"]), "unknown key 'sped' in ptp's options; did you mean 'speed'?");
        assert_eq!(unknown("key", "mode", "in joint A1's drive", &["slave", "gear"]), "unknown key 'mode' in joint A1's drive; known: gear, slave");
        assert_eq!(unknown("parameter", "k", "of clock", &[]), "unknown parameter 'k' of clock: it takes none");
    }
}
