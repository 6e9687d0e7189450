//! ESC/POS, the command language of network receipt printers (Epson's,
//! and the many that speak it): a ticket's lines as the bytes sent to port
//! 9100, and those bytes read back (for `ordergate fake-printer` and the
//! tests). Only the few commands a kitchen ticket needs.

use encoding_rs::{Encoding, SHIFT_JIS, WINDOWS_1252};
use ordergate_domain::printing::{PrintLine, Style};

const ESC: u8 = 0x1b;
const GS: u8 = 0x1d;
const FS: u8 = 0x1c;
const DLE: u8 = 0x10;
const EOT: u8 = 0x04;
const LF: u8 = b'\n';

/// `DLE EOT 1`: "send your printer status" — one byte back, answered after
/// everything sent before it was taken in. Its answer is what confirms a
/// ticket reached the printer.
pub const STATUS_REQUEST: [u8; 3] = [DLE, EOT, 1];
/// The status byte of a printer that is online: bits 1 and 4 are always set.
pub const STATUS_ONLINE: u8 = 0x12;
/// Set in the status byte while the printer cannot print (cover open, out
/// of paper, an error): what was sent waits in its buffer, or is lost.
const STATUS_OFFLINE: u8 = 0x08;

pub fn is_offline(status: u8) -> bool {
    status & STATUS_OFFLINE != 0
}

/// How a ticket's text is encoded for the printer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charset {
    /// Kanji mode with Shift_JIS: Japanese printers.
    ShiftJis,
    /// Code page WPC1252: Latin scripts.
    Windows1252,
}

impl Charset {
    /// The charset for a shop whose default language is `language`.
    pub fn for_language(language: &str) -> Charset {
        if language == "ja" || language.starts_with("ja-") {
            Charset::ShiftJis
        } else {
            Charset::Windows1252
        }
    }

    fn encoding(self) -> &'static Encoding {
        match self {
            Charset::ShiftJis => SHIFT_JIS,
            Charset::Windows1252 => WINDOWS_1252,
        }
    }

    fn select(self) -> &'static [u8] {
        match self {
            // FS & (Kanji mode on), FS C 1 (Shift_JIS).
            Charset::ShiftJis => &[FS, b'&', FS, b'C', 1],
            // ESC t 16 (WPC1252).
            Charset::Windows1252 => &[ESC, b't', 16],
        }
    }
}

/// The bytes of one ticket: reset, charset, the lines in their styles, a
/// feed and a partial cut.
pub fn encode(lines: &[PrintLine], charset: Charset) -> Vec<u8> {
    let mut out = vec![ESC, b'@'];
    out.extend_from_slice(charset.select());
    for line in lines {
        let (on, off): (&[u8], &[u8]) = match line.style {
            Style::Normal => (&[], &[]),
            Style::Bold => (&[ESC, b'E', 1], &[ESC, b'E', 0]),
            Style::Big => (&[GS, b'!', 0x11], &[GS, b'!', 0]),
        };
        out.extend_from_slice(on);
        out.extend_from_slice(&text_bytes(&line.text, charset));
        out.extend_from_slice(off);
        out.push(LF);
    }
    // ESC d 4 (feed past the cutter), GS V 66 0 (feed and partial cut).
    out.extend_from_slice(&[ESC, b'd', 4, GS, b'V', 66, 0]);
    out
}

/// A line's text in the printer's charset. Control characters become
/// spaces: a guest's note must not reach the printer as commands (a cut, a
/// drawer kick, a charset change).
fn text_bytes(text: &str, charset: Charset) -> Vec<u8> {
    let plain: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    // Characters the charset lacks print as `?`, not as HTML references.
    let mut out = Vec::with_capacity(plain.len());
    for c in plain.chars() {
        let mut buffer = [0u8; 4];
        let (bytes, _, unmappable) = charset.encoding().encode(c.encode_utf8(&mut buffer));
        if unmappable {
            out.push(b'?');
        } else {
            out.extend_from_slice(&bytes);
        }
    }
    out
}

/// What a printer made of the bytes it was sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printout {
    /// Each cut ends a ticket; its text lines, decoded.
    pub tickets: Vec<Vec<String>>,
    /// Lines after the last cut.
    pub uncut: Vec<String>,
    pub status_requests: usize,
}

/// Reads ESC/POS bytes as a printer would, for the commands [`encode`]
/// sends; other control bytes are skipped.
pub fn decode(bytes: &[u8]) -> Printout {
    let mut printout = Printout::default();
    let mut charset = Charset::Windows1252;
    let mut text = Vec::new();
    let mut i = 0;
    let flush_line = |text: &mut Vec<u8>, charset: Charset, lines: &mut Vec<String>| {
        let (line, _) = charset.encoding().decode_without_bom_handling(text);
        lines.push(line.into_owned());
        text.clear();
    };
    while i < bytes.len() {
        let rest = &bytes[i..];
        let skip = match rest {
            [ESC, b'@', ..] | [FS, b'&', ..] => 2,
            [FS, b'C', ..] => {
                charset = Charset::ShiftJis;
                3
            }
            [ESC, b't', ..] => {
                charset = Charset::Windows1252;
                3
            }
            [ESC, b'E' | b'd', ..] | [GS, b'!', ..] => 3,
            [DLE, EOT, ..] => {
                printout.status_requests += 1;
                3
            }
            [GS, b'V', 66, ..] => {
                if !text.is_empty() {
                    flush_line(&mut text, charset, &mut printout.uncut);
                }
                printout.tickets.push(std::mem::take(&mut printout.uncut));
                4
            }
            [LF, ..] => {
                flush_line(&mut text, charset, &mut printout.uncut);
                1
            }
            [byte, ..] if *byte < 0x20 => 1,
            [byte, ..] => {
                text.push(*byte);
                1
            }
            [] => unreachable!("the loop stops at the end"),
        };
        i += skip;
    }
    if !text.is_empty() {
        flush_line(&mut text, charset, &mut printout.uncut);
    }
    printout
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(style: Style, text: &str) -> PrintLine {
        PrintLine {
            style,
            text: text.into(),
        }
    }

    #[test]
    fn a_ticket_reads_back_line_by_line_and_ends_with_a_cut() {
        for (charset, lines) in [
            (
                Charset::Windows1252,
                ["#12  T4", "2 x Crème brûlée", "   ! no nuts"],
            ),
            (
                Charset::ShiftJis,
                ["#12  テーブル4", "2 x 焼き鳥", "   ! ネギ抜き"],
            ),
        ] {
            let ticket = [
                line(Style::Big, lines[0]),
                line(Style::Bold, lines[1]),
                line(Style::Normal, lines[2]),
            ];
            let printout = decode(&encode(&ticket, charset));
            assert_eq!(printout.tickets, [lines.map(String::from).to_vec()]);
            assert!(printout.uncut.is_empty());
        }
    }

    #[test]
    fn a_note_cannot_smuggle_commands_to_the_printer() {
        let sneaky = "no onions\x1dV\x42\x00\x1b@\x10\x04\x01\x1bp\x00";
        let bytes = encode(&[line(Style::Normal, sneaky)], Charset::Windows1252);
        let printout = decode(&bytes);
        assert_eq!(printout.tickets.len(), 1, "one cut: the ticket's own");
        assert_eq!(printout.status_requests, 0);
        assert_eq!(printout.tickets[0], ["no onions VB  @    p "]);
    }

    #[test]
    fn what_the_charset_lacks_prints_as_a_question_mark() {
        let printout = decode(&encode(
            &[line(Style::Normal, "1 x 焼き鳥 🍢")],
            Charset::Windows1252,
        ));
        assert_eq!(printout.tickets[0], ["1 x ??? ?"]);
    }

    #[test]
    fn japanese_shops_print_in_kanji_mode() {
        assert_eq!(Charset::for_language("ja"), Charset::ShiftJis);
        assert_eq!(Charset::for_language("ja-JP"), Charset::ShiftJis);
        assert_eq!(Charset::for_language("en"), Charset::Windows1252);
        assert_eq!(Charset::for_language("jam"), Charset::Windows1252);
    }
}
