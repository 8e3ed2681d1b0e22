//! Chunks: the batches of column vectors operators pass to each other.
//!
//! A [`Chunk`] holds up to [`CHUNK_ROWS`] rows as one vector of values per column.
//! Scans fill chunks from the storage layer's columnar batches (S1's parallel
//! decoding); every operator above consumes and produces whole chunks.
//!
//! Invariant: every column vector holds exactly `len` values (checked by
//! [`Chunk::check_invariants`] in tests and debug builds).

use tarn_row::{Batch, Value};

use crate::limits::CHUNK_ROWS;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chunk {
    columns: Vec<Vec<Value>>,
    len: usize,
}

impl Chunk {
    /// A chunk of `len` rows with no columns (what `SELECT 1` without FROM reads).
    pub fn empty_rows(len: usize) -> Chunk {
        Chunk {
            columns: Vec::new(),
            len,
        }
    }

    /// A chunk from column vectors of equal length.
    pub fn from_columns(columns: Vec<Vec<Value>>, len: usize) -> Chunk {
        debug_assert!(columns.iter().all(|c| c.len() == len));
        Chunk { columns, len }
    }

    /// A chunk from column vectors of equal length, at least one.
    pub fn from_vectors(columns: Vec<Vec<Value>>) -> Chunk {
        let len = columns.first().map_or(0, Vec::len);
        Chunk::from_columns(columns, len)
    }

    /// A chunk of rows (each of `width` values).
    pub fn from_rows(rows: Vec<Vec<Value>>, width: usize) -> Chunk {
        let len = rows.len();
        let mut columns: Vec<Vec<Value>> = (0..width).map(|_| Vec::with_capacity(len)).collect();
        for row in rows {
            debug_assert_eq!(row.len(), width);
            for (column, value) in columns.iter_mut().zip(row) {
                column.push(value);
            }
        }
        Chunk { columns, len }
    }

    /// A one-row chunk.
    pub fn from_row(row: &[Value]) -> Chunk {
        Chunk {
            columns: row.iter().map(|v| vec![v.clone()]).collect(),
            len: 1,
        }
    }

    /// Converts a storage batch (technique S1's decoded columns).
    pub fn from_batch(batch: &Batch) -> Chunk {
        let width = batch.projection().len();
        let len = batch.len();
        let columns = (0..width)
            .map(|c| (0..len).map(|r| batch.value(c, r)).collect())
            .collect();
        Chunk { columns, len }
    }

    /// Converts a storage batch of some of a table's `width` columns: each decoded
    /// column at its table position ([`Batch::projection`]), NULL elsewhere.
    pub fn from_batch_spread(batch: &Batch, width: usize) -> Chunk {
        let len = batch.len();
        let projection = batch.projection();
        if projection.len() == width && projection.iter().enumerate().all(|(i, &c)| i == c) {
            return Chunk::from_batch(batch);
        }
        let mut columns: Vec<Option<Vec<Value>>> = vec![None; width];
        for (k, &c) in projection.iter().enumerate() {
            columns[c] = Some((0..len).map(|r| batch.value(k, r)).collect());
        }
        let columns = columns
            .into_iter()
            .map(|column| column.unwrap_or_else(|| vec![Value::Null; len]))
            .collect();
        Chunk { columns, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn width(&self) -> usize {
        self.columns.len()
    }

    pub fn column(&self, index: usize) -> &[Value] {
        &self.columns[index]
    }

    pub fn columns(&self) -> &[Vec<Value>] {
        &self.columns
    }

    pub fn into_columns(self) -> Vec<Vec<Value>> {
        self.columns
    }

    /// Row `index` as values.
    pub fn row(&self, index: usize) -> Vec<Value> {
        self.columns.iter().map(|c| c[index].clone()).collect()
    }

    pub fn rows(&self) -> impl Iterator<Item = Vec<Value>> + '_ {
        (0..self.len).map(|i| self.row(i))
    }

    /// The rows at `indexes`, in that order.
    pub fn take(&self, indexes: &[usize]) -> Chunk {
        Chunk {
            columns: self
                .columns
                .iter()
                .map(|c| indexes.iter().map(|&i| c[i].clone()).collect())
                .collect(),
            len: indexes.len(),
        }
    }

    /// The rows where `keep` is set.
    pub fn filter(self, keep: &[bool]) -> Chunk {
        let len = keep.iter().filter(|&&k| k).count();
        if len == self.len {
            return self;
        }
        Chunk {
            columns: self
                .columns
                .into_iter()
                .map(|c| {
                    c.into_iter()
                        .zip(keep)
                        .filter_map(|(v, &k)| k.then_some(v))
                        .collect()
                })
                .collect(),
            len,
        }
    }

    /// Rows `start..end`.
    pub fn slice(&self, start: usize, end: usize) -> Chunk {
        let end = end.min(self.len);
        let start = start.min(end);
        Chunk {
            columns: self
                .columns
                .iter()
                .map(|c| c[start..end].to_vec())
                .collect(),
            len: end - start,
        }
    }

    /// The columns at `indexes`, in that order.
    pub fn project(&self, indexes: &[usize]) -> Chunk {
        Chunk {
            columns: indexes.iter().map(|&i| self.columns[i].clone()).collect(),
            len: self.len,
        }
    }

    /// This chunk's columns followed by `other`'s (same row count).
    pub fn zip(mut self, other: Chunk) -> Chunk {
        debug_assert_eq!(self.len, other.len);
        self.columns.extend(other.columns);
        self
    }

    /// Appends a row.
    pub fn push_row(&mut self, row: Vec<Value>) {
        if self.columns.is_empty() && self.len == 0 {
            self.columns = (0..row.len()).map(|_| Vec::new()).collect();
        }
        debug_assert_eq!(row.len(), self.columns.len());
        for (column, value) in self.columns.iter_mut().zip(row) {
            column.push(value);
        }
        self.len += 1;
    }

    /// Appends `other`'s rows (same width).
    pub fn append(&mut self, other: Chunk) {
        if self.columns.is_empty() && self.len == 0 {
            *self = other;
            return;
        }
        for (column, values) in self.columns.iter_mut().zip(other.columns) {
            column.extend(values);
        }
        self.len += other.len;
    }

    /// Splits into chunks of at most [`CHUNK_ROWS`] rows.
    pub fn split(self) -> Vec<Chunk> {
        if self.len <= CHUNK_ROWS {
            return vec![self];
        }
        // Moved, not cloned: each column is cut into pieces of `CHUNK_ROWS` values.
        let count = self.len.div_ceil(CHUNK_ROWS);
        let mut pieces: Vec<Vec<Vec<Value>>> = (0..count)
            .map(|_| Vec::with_capacity(self.columns.len()))
            .collect();
        for column in self.columns {
            let mut values = column.into_iter();
            for piece in &mut pieces {
                piece.push(values.by_ref().take(CHUNK_ROWS).collect());
            }
        }
        pieces
            .into_iter()
            .enumerate()
            .map(|(i, columns)| Chunk {
                columns,
                len: CHUNK_ROWS.min(self.len - i * CHUNK_ROWS),
            })
            .collect()
    }

    /// Approximate heap bytes held, for the per-query memory bound.
    pub fn memory_bytes(&self) -> usize {
        self.columns
            .iter()
            .flatten()
            .map(|v| {
                std::mem::size_of::<Value>()
                    + match v {
                        Value::Bytes(b) => b.capacity(),
                        _ => 0,
                    }
            })
            .sum()
    }

    pub fn check_invariants(&self) {
        for column in &self.columns {
            assert_eq!(column.len(), self.len, "a column vector's length differs");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_moves_rows_into_pieces_of_chunk_rows_in_order() {
        for len in [0, 1, CHUNK_ROWS, CHUNK_ROWS + 1, 2 * CHUNK_ROWS + 452] {
            let ints: Vec<Value> = (0..len as i64).map(Value::Int).collect();
            let texts: Vec<Value> = (0..len)
                .map(|i| Value::Bytes(format!("r{i}").into_bytes()))
                .collect();
            let pieces = Chunk::from_columns(vec![ints.clone(), texts.clone()], len).split();
            assert_eq!(pieces.len(), len.div_ceil(CHUNK_ROWS).max(1), "len {len}");
            assert!(pieces.iter().all(|p| p.len() <= CHUNK_ROWS));
            let joined: Vec<Value> = pieces.iter().flat_map(|p| p.column(0).to_vec()).collect();
            assert_eq!(joined, ints, "len {len}");
            let joined: Vec<Value> = pieces.iter().flat_map(|p| p.column(1).to_vec()).collect();
            assert_eq!(joined, texts, "len {len}");
        }
        let no_columns = Chunk::empty_rows(CHUNK_ROWS + 3).split();
        let lens: Vec<usize> = no_columns.iter().map(Chunk::len).collect();
        assert_eq!(lens, [CHUNK_ROWS, 3]);
    }
}
