//! Plain-text tables for the terminal.

use std::fmt::Write;

/// "1 shop", "3 shops": a count and its noun, which is plural unless the
/// count is one (every noun counted here takes an "s").
pub(crate) fn counted<N>(n: N, noun: &str) -> String
where
    N: std::fmt::Display + PartialEq + From<u8>,
{
    let plural = if n == N::from(1) { "" } else { "s" };
    format!("{n} {noun}{plural}")
}

/// Renders rows under a header, each column padded to its widest cell.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        rows.iter()
            .filter_map(|row| row.get(i))
            .map(|cell| cell.chars().count())
            .chain([header[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (cell, width) in cells.zip(&widths) {
            let _ = write!(text, "{cell:<width$}  ");
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&mut rule.iter().map(String::as_str));
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let text = super::table(
            &["check", "result"],
            &[
                vec!["rows".into(), "ok".into()],
                vec!["a longer check".into(), "MISMATCH".into()],
            ],
        );
        assert_eq!(
            text,
            "check           result\n\
             --------------  --------\n\
             rows            ok\n\
             a longer check  MISMATCH\n"
        );
    }
}
