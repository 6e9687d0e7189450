//! The printed table: one row per figure, its reference and ratio, its
//! DESIGN.md target and the verdict, with notes under a row where a figure
//! needs explaining.

use crate::load::Figure;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A reference other figures are divided by.
    Reference,
    /// Reported, with no DESIGN.md target.
    Info,
    Pass,
    Fail,
    /// A reference or reported figure that got unexpected answers.
    Errors,
}

impl Verdict {
    fn text(self) -> &'static str {
        match self {
            Verdict::Reference => "reference",
            Verdict::Info => "info",
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Errors => "ERRORS",
        }
    }

    /// Whether the run is still good with this row in it.
    fn ok(self) -> bool {
        !matches!(self, Verdict::Fail | Verdict::Errors)
    }

    pub fn pass_if(met: bool) -> Verdict {
        if met { Verdict::Pass } else { Verdict::Fail }
    }
}

pub struct Row {
    name: String,
    value: String,
    p50: String,
    p99: String,
    errors: String,
    reference: String,
    ratio: String,
    target: String,
    verdict: Verdict,
    notes: Vec<String>,
}

pub fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |ms| format!("{ms:.2} ms"))
}

impl Row {
    /// A row with only a name and a value.
    pub fn info(name: &str, value: String) -> Row {
        Row {
            name: name.into(),
            value,
            p50: "-".into(),
            p99: "-".into(),
            errors: "-".into(),
            reference: "-".into(),
            ratio: "-".into(),
            target: "-".into(),
            verdict: Verdict::Info,
            notes: Vec::new(),
        }
    }

    /// A throughput figure: rate, latency, errors (and the first one).
    fn figure(name: &str, figure: &Figure) -> Row {
        let mut row = Row::info(name, format!("{:.0}/s", figure.rate))
            .latency(figure.ms(0.5), figure.ms(0.99))
            .errors(figure.errors);
        if let Some(e) = &figure.first_error {
            row = row.note(format!("first error: {e}"));
        }
        row
    }

    pub fn reference(name: &str, figure: &Figure) -> Row {
        let verdict = if figure.errors == 0 {
            Verdict::Reference
        } else {
            Verdict::Errors
        };
        Row::figure(name, figure).verdict(verdict)
    }

    /// `figure`'s rate over `reference`'s, which must be at least `target`.
    pub fn ratio(name: &str, figure: &Figure, reference: (&str, &Figure), target: f64) -> Row {
        let (reference_name, reference) = reference;
        let ratio = figure.rate / reference.rate;
        let met = ratio >= target && figure.errors == 0;
        let mut row = Row::figure(name, figure).verdict(Verdict::pass_if(met));
        row.reference = format!("{reference_name} {:.0}/s", reference.rate);
        row.ratio = format!("{ratio:.2}");
        row.target = format!(">= {target}");
        row
    }

    pub fn latency(mut self, p50: Option<f64>, p99: Option<f64>) -> Row {
        self.p50 = ms(p50);
        self.p99 = ms(p99);
        self
    }

    pub fn errors(mut self, errors: u64) -> Row {
        self.errors = errors.to_string();
        if errors > 0 && self.verdict == Verdict::Info {
            self.verdict = Verdict::Errors;
        }
        self
    }

    pub fn target(mut self, target: &str, met: bool) -> Row {
        self.target = target.into();
        self.verdict = Verdict::pass_if(met);
        self
    }

    pub fn verdict(mut self, verdict: Verdict) -> Row {
        self.verdict = verdict;
        self
    }

    pub fn note(mut self, note: String) -> Row {
        self.notes.push(note);
        self
    }
}

#[derive(Default)]
pub struct Report {
    rows: Vec<Row>,
}

impl Report {
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// Prints the table; true when every target is met and nothing failed.
    pub fn print(&self) -> bool {
        let header = [
            "figure",
            "value",
            "p50",
            "p99",
            "errors",
            "reference",
            "ratio",
            "target",
        ];
        let cells: Vec<[&str; 8]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    r.name.as_str(),
                    &r.value,
                    &r.p50,
                    &r.p99,
                    &r.errors,
                    &r.reference,
                    &r.ratio,
                    &r.target,
                ]
            })
            .collect();
        let mut widths = header.map(str::len);
        for row in &cells {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |cells: &[&str; 8], result: &str| {
            let mut out = String::new();
            for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
                let pad = width - cell.chars().count();
                // Text columns left, numbers right.
                if matches!(i, 0 | 5 | 7) {
                    out.push_str(cell);
                    out.push_str(&" ".repeat(pad));
                } else {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(cell);
                }
                out.push_str("  ");
            }
            out.push_str(result);
            println!("{out}");
        };
        println!();
        line(&header, "result");
        let mut ok = true;
        for (row, cells) in self.rows.iter().zip(&cells) {
            line(cells, row.verdict.text());
            for note in &row.notes {
                println!("    {note}");
            }
            ok &= row.verdict.ok();
        }
        println!();
        println!(
            "targets from DESIGN.md \"Performance and scale\"; ratios are this run's figure over \
             this run's reference"
        );
        ok
    }
}
