//! "Did you mean …?": the candidate nearest to a misspelt name.

/// The edit distance (insertions, deletions, substitutions and swaps of two neighbouring
/// characters) between `a` and `b`, or `None` once it exceeds `limit`.
pub fn edit_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    // Rows of the Damerau–Levenshtein (optimal string alignment) table.
    let mut before: Vec<usize> = Vec::new();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        if row.iter().min().is_some_and(|&m| m > limit) {
            return None;
        }
        before = std::mem::replace(&mut prev, row);
    }
    Some(prev[b.len()]).filter(|&d| d <= limit)
}

/// The candidate closest to `name`, if one is close enough to be a likely misspelling: at most
/// one edit for names of up to 3 characters, two up to 6, else a third of the length. Ties go to
/// the candidate listed first; `name` itself is never suggested.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    if len == 0 || name.len() > 200 {
        return None;
    }
    let limit = match len {
        0..=3 => 1,
        4..=6 => 2,
        n => n / 3,
    };
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        // A candidate of more than 4 bytes per character of `name` plus the limit has more
        // characters than any match can: skipped without counting them.
        if c == name || c.len() > 4 * (name.len() + limit) {
            continue;
        }
        // A difference of case only is the most likely slip of all.
        let d = if c.eq_ignore_ascii_case(name) { Some(0) } else { edit_distance(name, c, limit) };
        if let Some(d) = d {
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, c));
            }
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("shced", "sched", 3), Some(1));
        assert_eq!(edit_distance("kitten", "sitting", 5), Some(3));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("", "abc", 3), Some(3));
        assert_eq!(edit_distance("abc", "abc", 0), Some(0));
    }

    #[test]
    fn suggestions() {
        let kw = ["fn", "let", "sched", "split", "sync", "for", "while", "return"];
        assert_eq!(suggest("shced", kw), Some("sched"));
        assert_eq!(suggest("retrun", kw), Some("return"));
        assert_eq!(suggest("lte", kw), Some("let"));
        assert_eq!(suggest("banana", kw), None);
        assert_eq!(suggest("x", ["y", "xs"]), Some("y"));
        assert_eq!(suggest("N", ["n", "M"]), Some("n"));
        assert_eq!(suggest("sched", ["sched"]), None);
    }
}
