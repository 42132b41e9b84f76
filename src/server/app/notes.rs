//! The note store behind `note_create` / `note_get` / `note_list` / `note_delete`: shared
//! by every session of one server, bounded (the oldest note goes when a new one would
//! pass the bound), and locked only for the map operation itself.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Notes one server keeps at most.
pub const MAX_NOTES: usize = 10_000;
/// Prefix of every note id; the rest is the note's sequence number.
pub const ID_PREFIX: &str = "n-";

/// One note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub id: String,
    pub title: String,
    pub body: String,
}

#[derive(Debug, Default)]
struct Notes {
    /// The sequence number of the next note (ids are never reused).
    next: u64,
    /// By sequence number, so the first entry is the oldest.
    map: BTreeMap<u64, (String, String)>,
}

/// The notes of one server.
#[derive(Debug)]
pub struct NoteStore {
    inner: Mutex<Notes>,
    cap: usize,
}

impl Default for NoteStore {
    fn default() -> Self {
        NoteStore::new(MAX_NOTES)
    }
}

/// The sequence number of an id of ours, if it is one.
fn sequence(id: &str) -> Option<u64> {
    let digits = id.strip_prefix(ID_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn id_of(seq: u64) -> String {
    format!("{ID_PREFIX}{seq}")
}

impl NoteStore {
    /// A store of at most `cap` notes (at least one).
    pub fn new(cap: usize) -> NoteStore {
        NoteStore {
            inner: Mutex::new(Notes {
                next: 1,
                map: BTreeMap::new(),
            }),
            cap: cap.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Notes> {
        // A panic while holding the lock cannot leave the map half-updated in a way that
        // matters here: keep serving.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Store a note and return its id; the oldest note goes if the store is full.
    pub fn create(&self, title: String, body: String) -> String {
        let mut notes = self.lock();
        let seq = notes.next;
        notes.next = notes.next.saturating_add(1);
        while notes.map.len() >= self.cap {
            if notes.map.pop_first().is_none() {
                break;
            }
        }
        notes.map.insert(seq, (title, body));
        drop(notes);
        id_of(seq)
    }

    /// The note named `id`.
    pub fn get(&self, id: &str) -> Option<Note> {
        let seq = sequence(id)?;
        let (title, body) = self.lock().map.get(&seq).cloned()?;
        Some(Note {
            id: id_of(seq),
            title,
            body,
        })
    }

    /// Remove the note named `id`; whether it existed.
    pub fn delete(&self, id: &str) -> bool {
        sequence(id).is_some_and(|seq| self.lock().map.remove(&seq).is_some())
    }

    /// The newest `limit` notes (newest first, without their bodies) and how many
    /// there are in all.
    pub fn list(&self, limit: usize) -> (Vec<(String, String)>, usize) {
        let notes = self.lock();
        let newest = notes
            .map
            .iter()
            .rev()
            .take(limit)
            .map(|(seq, (title, _))| (*seq, title.clone()))
            .collect::<Vec<_>>();
        let total = notes.map.len();
        drop(notes);
        let newest = newest
            .into_iter()
            .map(|(seq, title)| (id_of(seq), title))
            .collect();
        (newest, total)
    }

    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_and_ids_are_not_reused() {
        let store = NoteStore::new(10);
        let a = store.create("a".into(), "first".into());
        let b = store.create("b".into(), "second".into());
        assert_eq!((a.as_str(), b.as_str()), ("n-1", "n-2"));
        assert_eq!(store.get(&a).map(|n| n.body), Some("first".into()));
        assert!(store.delete(&a));
        assert!(!store.delete(&a));
        assert_eq!(store.get(&a), None);
        assert_eq!(store.create("c".into(), String::new()), "n-3");
        let (list, total) = store.list(10);
        assert_eq!(total, 2);
        assert_eq!(list[0], ("n-3".to_string(), "c".to_string()));
        assert_eq!(list[1].0, "n-2");
    }

    #[test]
    fn ids_that_are_not_ours_name_no_note() {
        let store = NoteStore::new(10);
        store.create("a".into(), String::new());
        for id in [
            "",
            "n-",
            "1",
            "n-01x",
            "n- 1",
            "n-+1",
            "n-99999999999999999999999",
        ] {
            assert_eq!(store.get(id), None, "{id:?}");
            assert!(!store.delete(id), "{id:?}");
        }
        assert!(store.get("n-1").is_some());
    }

    #[test]
    fn the_store_drops_its_oldest_note_past_the_bound() {
        let store = NoteStore::new(3);
        let ids: Vec<String> = (0..5)
            .map(|i| store.create(format!("t{i}"), String::new()))
            .collect();
        assert_eq!(store.len(), 3);
        assert!(store.get(&ids[0]).is_none() && store.get(&ids[1]).is_none());
        assert!(ids[2..].iter().all(|id| store.get(id).is_some()));
        let (list, total) = store.list(2);
        assert_eq!((list.len(), total), (2, 3));
        assert_eq!(list[0].0, ids[4]);
        assert_eq!(NoteStore::default().cap, MAX_NOTES);
        assert_eq!(NoteStore::new(0).cap, 1);
    }
}
