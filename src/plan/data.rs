//! `[data.NAME]` pools: the rows of a CSV or JSON-lines file, read when the plan is
//! made and shared by every session of the run. How a session picks a row (its order)
//! is the pool's; the session keeps its client's cursors.

use super::error::PlanError;
use crate::profile::DataSection;
use crate::shard::Shard;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Index of a pool in [`Pools`].
pub type PoolId = u16;

/// How sessions draw rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Each virtual client walks the rows in order, starting at row (client index mod
    /// rows), wrapping around.
    Sequential,
    /// A seeded random row per draw.
    Random,
    /// Each row at most once across the run (a shard of a sharded run takes its share);
    /// a draw after the last row has no value.
    Unique,
}

/// One pool: its rows as JSON (a CSV row is an object of strings keyed by the header).
#[derive(Debug)]
pub struct Pool {
    pub name: String,
    pub order: Order,
    /// The field `${pool.NAME}` gives: the `column`, else a CSV file's first column;
    /// `None` for JSON lines without `column` (the whole line).
    pub default_field: Option<String>,
    pub rows: Vec<serde_json::Value>,
    /// A CSV file's header (`${pool.NAME.FIELD}` must name one of them); `None` for JSON
    /// lines, whose fields are not known before a row is drawn.
    pub header: Option<Vec<String>>,
    /// The file as the profile names it (for `validate`).
    pub source: String,
    /// How many `unique` draws this process made so far.
    next_unique: AtomicU64,
    /// The run's shard: its c-th `unique` draw takes row I + N·c, so shards never take
    /// the same row and together take them in order.
    shard: Shard,
}

impl Pool {
    pub fn new(
        name: String,
        order: Order,
        default_field: Option<String>,
        rows: Vec<serde_json::Value>,
    ) -> Pool {
        Pool {
            name,
            order,
            default_field,
            rows,
            header: None,
            source: String::new(),
            next_unique: AtomicU64::new(0),
            shard: Shard::ONE,
        }
    }

    /// The same pool with its draws not started (a plan's copy for another shard).
    pub fn clone_rows(&self) -> Pool {
        Pool {
            name: self.name.clone(),
            order: self.order,
            default_field: self.default_field.clone(),
            rows: self.rows.clone(),
            header: self.header.clone(),
            source: self.source.clone(),
            next_unique: AtomicU64::new(0),
            shard: self.shard,
        }
    }

    /// One row for a draw: `sequential` takes row `*cursor` and moves the cursor on (a
    /// client's cursor starts at its index), `random` a row from `rng`, `unique` the
    /// next row of the run (`None` once every row was taken).
    pub fn draw(&self, cursor: &mut u64, rng: &mut impl rand::Rng) -> Option<&Value> {
        match self.order {
            Order::Sequential => {
                let row = self.row(*cursor);
                *cursor = cursor.wrapping_add(1);
                row
            }
            Order::Random => {
                let n = self.rows.len();
                (n > 0).then(|| &self.rows[rng.random_range(0..n)])
            }
            Order::Unique => self.claim_unique(),
        }
    }

    /// The next row of a `unique` pool (this shard's next), or `None` once every row
    /// was taken.
    pub fn claim_unique(&self) -> Option<&serde_json::Value> {
        let c = self.next_unique.fetch_add(1, Ordering::Relaxed);
        let i = c
            .checked_mul(u64::from(self.shard.count))
            .and_then(|x| x.checked_add(u64::from(self.shard.index)))?;
        usize::try_from(i).ok().and_then(|i| self.rows.get(i))
    }

    /// Row `i` modulo the rows (`None` for an empty pool, which the plan refuses).
    pub fn row(&self, i: u64) -> Option<&serde_json::Value> {
        let n = self.rows.len() as u64;
        (n > 0).then(|| &self.rows[(i % n) as usize])
    }

    /// The value of `field` (or the default field) in `row`; the whole row when the
    /// pool has no default field and none is named.
    pub fn field<'r>(
        &self,
        row: &'r serde_json::Value,
        field: Option<&str>,
    ) -> Option<&'r serde_json::Value> {
        match field.or(self.default_field.as_deref()) {
            Some(f) => row.get(f),
            None => Some(row),
        }
    }
}

/// Every pool of the plan, by [`PoolId`].
#[derive(Debug, Default)]
pub struct Pools(pub Vec<Pool>);

impl Pools {
    /// Draw `unique` rows as shard `shard` of the run (before any draw).
    pub fn set_shard(&mut self, shard: Shard) {
        for p in &mut self.0 {
            p.shard = shard;
        }
    }

    pub fn get(&self, id: PoolId) -> &Pool {
        &self.0[usize::from(id)]
    }

    /// The `[data.NAME]` sections of the profile at `origin`, each file read now.
    /// Relative paths are relative to the profile's folder (the current one when the
    /// profile is not a file).
    pub fn from_sections(
        sections: &BTreeMap<String, DataSection>,
        origin: &str,
    ) -> Result<Pools, PlanError> {
        if sections.len() > usize::from(PoolId::MAX) {
            return Err(PlanError::new(
                origin,
                "data",
                "too many pools",
                "use fewer than 65535 [data] sections",
            ));
        }
        let base = base_folder(origin);
        sections
            .iter()
            .map(|(name, section)| load_pool(name, section, &base, origin))
            .collect::<Result<Vec<_>, _>>()
            .map(Pools)
    }

    /// One line per pool, e.g. "timezones: 594 rows from data/tz.csv, random".
    pub fn describe(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|p| {
                let n = p.rows.len();
                let order = match p.order {
                    Order::Sequential => "sequential",
                    Order::Random => "random",
                    Order::Unique => "unique",
                };
                let rows = if n == 1 { "row" } else { "rows" };
                let column = p
                    .default_field
                    .as_deref()
                    .map(|c| format!(", column {c}"))
                    .unwrap_or_default();
                format!("{}: {n} {rows} from {}, {order}{column}", p.name, p.source)
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn id_of(&self, name: &str) -> Option<PoolId> {
        self.0
            .iter()
            .position(|p| p.name == name)
            .and_then(|i| PoolId::try_from(i).ok())
    }
}

/// The folder relative data paths start from: the profile's, when `origin` is a file.
pub(super) fn base_folder(origin: &str) -> PathBuf {
    let path = Path::new(origin);
    if path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        PathBuf::new()
    }
}

/// `[A-Za-z_][A-Za-z0-9_-]*`.
fn is_pool_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Csv,
    Lines,
}

fn load_pool(name: &str, s: &DataSection, base: &Path, origin: &str) -> Result<Pool, PlanError> {
    let key = |k: &str| format!("data.{name}.{k}");
    if !is_pool_name(name) {
        return Err(PlanError::new(
            origin,
            format!("data.{name}"),
            format!("{name:?} is not a pool name"),
            "name a pool with letters, digits, '_' and '-', starting with a letter or '_'",
        ));
    }
    let order = match s.order.as_deref() {
        None | Some("sequential") => Order::Sequential,
        Some("random") => Order::Random,
        Some("unique") => Order::Unique,
        Some(other) => {
            return Err(PlanError::new(
                origin,
                key("order"),
                format!("unknown order {other:?}"),
                "use \"sequential\", \"random\" or \"unique\"",
            ))
        }
    };
    if s.file.trim().is_empty() {
        return Err(PlanError::new(
            origin,
            key("file"),
            "is empty",
            "name a CSV or JSON-lines file, e.g. file = \"data/users.csv\"",
        ));
    }
    let path = Path::new(&s.file);
    let format = match s.format.as_deref() {
        Some("csv") => Format::Csv,
        Some("jsonl" | "ndjson") => Format::Lines,
        Some(other) => {
            return Err(PlanError::new(
                origin,
                key("format"),
                format!("unknown format {other:?}"),
                "use \"csv\" or \"jsonl\"",
            ))
        }
        None => match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => Format::Csv,
            _ => Format::Lines,
        },
    };
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let text = std::fs::read_to_string(&full).map_err(|e| {
        PlanError::new(
            origin,
            key("file"),
            format!("cannot read {}: {e}", full.display()),
            "check the path (a relative one starts at the profile's folder)",
        )
    })?;
    let (rows, header, default_field) = match format {
        Format::Csv => {
            let (header, rows) = read_csv(&text, &key("file"), origin)?;
            let default_field = match &s.column {
                Some(c) if !header.contains(c) => {
                    return Err(PlanError::new(
                        origin,
                        key("column"),
                        format!("{c:?} is not a column of {}", s.file),
                        format!("use one of: {}", header.join(", ")),
                    ))
                }
                Some(c) => Some(c.clone()),
                None => header.first().cloned(),
            };
            (rows, Some(header), default_field)
        }
        Format::Lines => {
            let rows = read_lines(&text, s.column.as_deref(), &key, origin)?;
            (rows, None, s.column.clone())
        }
    };
    if rows.is_empty() {
        return Err(PlanError::new(
            origin,
            key("file"),
            format!("{} has no rows", s.file),
            "put at least one row in the file (a CSV file also needs its header line)",
        ));
    }
    let mut pool = Pool::new(name.to_string(), order, default_field, rows);
    pool.header = header;
    pool.source = s.file.clone();
    Ok(pool)
}

/// A CSV file with a header line: the header and each row as an object of strings.
fn read_csv(text: &str, key: &str, origin: &str) -> Result<(Vec<String>, Vec<Value>), PlanError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let line_of = |e: &csv::Error| e.position().map(|p| p.line()).unwrap_or(1);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| {
            PlanError::new(
                origin,
                key,
                format!("line {} is not a CSV header", line_of(&e)),
                "start the file with a header line, e.g. name,zone",
            )
        })?
        .iter()
        .map(str::to_string)
        .collect();
    if header.is_empty() || header.iter().any(String::is_empty) {
        return Err(PlanError::new(
            origin,
            key,
            "the CSV header has an empty column name",
            "name every column in the first line, e.g. name,zone",
        ));
    }
    if let Some(dup) = header
        .iter()
        .enumerate()
        .find_map(|(i, h)| header[..i].contains(h).then_some(h))
    {
        return Err(PlanError::new(
            origin,
            key,
            format!("the CSV header names column {dup:?} twice"),
            "give each column its own name",
        ));
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = line_of(&e);
            let problem = match e.kind() {
                csv::ErrorKind::UnequalLengths { len, .. } => {
                    format!("line {line} has {len} fields, the header {}", header.len())
                }
                _ => format!("line {line} is not valid CSV"),
            };
            PlanError::new(
                origin,
                key,
                problem,
                "give every row as many fields as the header; quote fields with commas in \"…\"",
            )
        })?;
        let row: serde_json::Map<String, Value> = header
            .iter()
            .zip(record.iter())
            .map(|(h, v)| (h.clone(), Value::String(v.to_string())))
            .collect();
        rows.push(Value::Object(row));
    }
    Ok((header, rows))
}

/// JSON lines: each non-blank line one value; with `column`, each an object that has it.
fn read_lines(
    text: &str,
    column: Option<&str>,
    key: &dyn Fn(&str) -> String,
    origin: &str,
) -> Result<Vec<Value>, PlanError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        let value: Value = serde_json::from_str(line).map_err(|_| {
            PlanError::new(
                origin,
                key("file"),
                format!("line {n} is not JSON"),
                "write one JSON value per line (a CSV file needs a .csv name or format = \"csv\")",
            )
        })?;
        if let Some(c) = column {
            if value.get(c).is_none() {
                return Err(PlanError::new(
                    origin,
                    key("column"),
                    format!("line {n} is not an object with field {c:?}"),
                    "give every line that field, or drop `column` to take whole lines",
                ));
            }
        }
        rows.push(value);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests;
