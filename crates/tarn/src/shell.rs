//! `tarn sql`: a local SQL shell on the embedded engine.
//!
//! ```text
//! tarn sql [--data-dir DIR] [-D db] [-e "SQL"] [--force] [--table | --batch]
//! ```
//!
//! With `-e` it runs the given statements; otherwise it reads statements from stdin:
//! a script when stdin is not a terminal, an interactive prompt when it is. Results
//! print as the mysql client prints them: a bordered table on a terminal (or with
//! `--table`), tab-separated lines with a header otherwise (`--batch`). An error
//! prints `ERROR <code> (<sqlstate>): <message>` on stderr and, unless `--force`,
//! stops a script with exit status 1.

use std::io::{BufRead, IsTerminal, Write};

use tarn_common::Error;
use tarn_row::Value;
use tarn_sql::{Engine, QueryResult, Session};

pub struct ShellOptions {
    pub database: Option<String>,
    pub execute: Option<String>,
    pub force: bool,
    /// Some(true): tables; Some(false): batch; None: tables on a terminal.
    pub table: Option<bool>,
}

/// A value of a column of type `ty` as the mysql client prints it.
fn text(v: &Value, ty: tarn_sql::SqlType) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        v => tarn_sql::scalar::cast::to_text_as(v, ty)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|| "NULL".into()),
    }
}

/// A row's values as the mysql client prints them.
fn row_text(row: &[Value], columns: &[tarn_sql::plan::OutputColumn]) -> Vec<String> {
    row.iter()
        .zip(columns)
        .map(|(v, c)| text(v, c.ty))
        .collect()
}

fn print_result(result: &QueryResult, table: bool, out: &mut impl Write) -> std::io::Result<()> {
    match result {
        // The shell sets no row sink: its results are collected.
        QueryResult::Streamed { .. } => {}
        QueryResult::Ok {
            affected_rows,
            info,
            ..
        } => {
            if table {
                writeln!(
                    out,
                    "Query OK, {affected_rows} row{} affected{}",
                    if *affected_rows == 1 { "" } else { "s" },
                    if info.is_empty() {
                        String::new()
                    } else {
                        format!("\n{info}")
                    }
                )?;
            }
        }
        QueryResult::Rows { columns, .. } => {
            let rows = result.all_rows();
            if table {
                if rows.is_empty() {
                    writeln!(out, "Empty set")?;
                    return Ok(());
                }
                let cells: Vec<Vec<String>> = rows.iter().map(|r| row_text(r, columns)).collect();
                let widths: Vec<usize> = columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        cells
                            .iter()
                            .map(|r| r[i].chars().count())
                            .chain(std::iter::once(c.name.chars().count()))
                            .max()
                            .unwrap_or(0)
                    })
                    .collect();
                let rule: String = widths
                    .iter()
                    .map(|w| format!("+{}", "-".repeat(w + 2)))
                    .collect::<String>()
                    + "+";
                let line = |values: &[String]| -> String {
                    values
                        .iter()
                        .zip(&widths)
                        .map(|(v, w)| format!("| {v}{} ", " ".repeat(w - v.chars().count())))
                        .collect::<String>()
                        + "|"
                };
                writeln!(out, "{rule}")?;
                let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
                writeln!(out, "{}", line(&names))?;
                writeln!(out, "{rule}")?;
                for row in &cells {
                    writeln!(out, "{}", line(row))?;
                }
                writeln!(out, "{rule}")?;
                writeln!(
                    out,
                    "{} row{} in set",
                    rows.len(),
                    if rows.len() == 1 { "" } else { "s" }
                )?;
            } else {
                let header: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
                writeln!(out, "{}", header.join("\t"))?;
                for row in &rows {
                    let line: Vec<String> =
                        row_text(row, columns).iter().map(|t| escape(t)).collect();
                    writeln!(out, "{}", line.join("\t"))?;
                }
            }
        }
    }
    Ok(())
}

/// Batch output escapes tabs, newlines and backslashes, as mysql --batch does.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn print_error(e: &Error) {
    eprintln!("ERROR {} ({}): {}", e.mysql_code(), e.sqlstate(), e);
}

/// Runs every statement of `sql`; returns false if one failed.
fn run_text(session: &mut Session, sql: &str, table: bool, force: bool) -> bool {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut ok = true;
    // Statements run one by one so that an error stops only what follows it.
    session.execute_each(sql, &mut |result| match result {
        Ok(r) => {
            let _ = print_result(&r, table, &mut out);
            true
        }
        Err(e) => {
            print_error(&e);
            ok = false;
            force
        }
    });
    let _ = out.flush();
    ok
}

/// True once `buffer` holds a complete statement: a `;` outside quotes and comments
/// ends it (the interactive prompt waits for more lines until then).
fn complete(buffer: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut chars = buffer.chars().peekable();
    let mut last_significant = None;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == '\\' && q != '`' {
                    chars.next();
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => quote = Some(c),
                '-' if chars.peek() == Some(&'-') => {
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '#' => {
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                c if !c.is_whitespace() => last_significant = Some(c),
                _ => {}
            },
        }
    }
    quote.is_none() && last_significant == Some(';')
}

/// Runs the shell; returns the process exit status.
pub fn run(engine: std::sync::Arc<Engine>, options: ShellOptions) -> u8 {
    let mut session = engine.session("root", "localhost");
    if let Some(db) = &options.database
        && let Err(e) = session.use_database(db)
    {
        print_error(&e);
        return 1;
    }
    let stdin = std::io::stdin();
    let interactive = options.execute.is_none() && stdin.is_terminal();
    let table = options
        .table
        .unwrap_or_else(|| std::io::stdout().is_terminal());
    if let Some(sql) = &options.execute {
        return if run_text(&mut session, sql, table, options.force) {
            0
        } else {
            1
        };
    }
    if !interactive {
        let mut script = String::new();
        for line in stdin.lock().lines() {
            match line {
                Ok(l) => {
                    script.push_str(&l);
                    script.push('\n');
                }
                Err(e) => {
                    eprintln!("error: reading stdin: {e}");
                    return 1;
                }
            }
        }
        return if run_text(&mut session, &script, table, options.force) {
            0
        } else {
            1
        };
    }
    println!(
        "Tarn SQL shell (connection {}). End statements with ';'; type 'exit' to leave.",
        session.connection_id()
    );
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() {
            format!("tarn [{}]> ", session.database().unwrap_or("(none)"))
        } else {
            "    -> ".to_string()
        };
        print!("{prompt}");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: reading stdin: {e}");
                return 1;
            }
        }
        let trimmed = line.trim();
        if buffer.is_empty() && matches!(trimmed.trim_end_matches(';'), "exit" | "quit" | "\\q") {
            break;
        }
        buffer.push_str(&line);
        if complete(&buffer) {
            run_text(&mut session, &buffer, table, true);
            buffer.clear();
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::complete;

    #[test]
    fn a_statement_ends_at_a_semicolon_outside_quotes_and_comments() {
        assert!(complete("select 1;"));
        assert!(!complete("select ';'"));
        assert!(complete("select ';';"));
        assert!(!complete("select 1 -- ;"));
        assert!(complete("select 1; -- done\n"));
        assert!(!complete("select \"a;"));
    }
}
