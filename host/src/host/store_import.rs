//! The component's WIT `store` import (`wit/node.wit`), served from a [`Backend`].
//!
//! Each instance has a [`StoreImport`] of its own: the backend its calls go to (the
//! node's, or a wrapper of it for one call) and how often it was called
//! ([`StoreCalls`]). `write` is linked twice: the generated bindings lift a batch into
//! vectors of their own, and [`add_to_linker`] shadows that with a `write` that reads
//! the batch in place in the component's memory (an ingest batch writes tens of
//! megabytes).
//!
//! `recall` and `remember` go to the backend's body cache, which every instance
//! shares (`bodies.rs`). They are not counted in [`StoreCalls`]: no round trip to the
//! store. A value is remembered under the cache's generation as it was before the
//! first read the instance made in its current call into the component
//! ([`StoreImport::begin`]), so a value computed from reads that another instance's
//! reset overtook is not kept. After a write of the instance's own that forgets, its
//! next read notes the generation again: what it reads then is the new state, and what
//! it remembers is its own business, as on any store (the storage check remembers after
//! each of its range deletes).

use std::sync::Arc;

use ledger_node_core::storage::store::{Op, Scan, WriteError, forgets_remembered};
use wasmtime::StoreContextMut;
use wasmtime::component::{HasSelf, Linker, WasmList};
use wasmtime::error::Context as _;

use super::bindings::NodeApi;
use super::bindings::ledger::node::store as wit;
use crate::backend::{Backend, OpRef};

/// How many times an instance called each function of its `store` import: each one is
/// a round trip to the backend (to D1, at the edge).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreCalls {
    /// `get`
    pub get: u32,
    /// `get-many`
    pub get_many: u32,
    /// `scan`
    pub scan: u32,
    /// `write`
    pub write: u32,
}

impl StoreCalls {
    /// Reads of any kind.
    pub fn reads(&self) -> u32 {
        self.get + self.get_many + self.scan
    }
}

/// The store import of one instance.
#[derive(Debug)]
pub struct StoreImport {
    /// Where its calls go.
    pub backend: Arc<dyn Backend>,
    /// How often it was called.
    pub calls: StoreCalls,
    /// The body cache's generation before the first read of the current call into
    /// the component (since its last forgetting write); `None`: no read yet.
    since: Option<u64>,
}

impl StoreImport {
    /// The import served from `backend`, not yet called.
    pub fn new(backend: Arc<dyn Backend>) -> Self {
        StoreImport { backend, calls: StoreCalls::default(), since: None }
    }

    /// A call into the component begins: what it remembers was computed from what it
    /// reads from now on.
    pub fn begin(&mut self) {
        self.since = None;
    }

    /// A read begins: the first of the call notes the generation.
    fn reading(&mut self) {
        if self.since.is_none() {
            self.since = Some(self.backend.bodies().generation());
        }
    }

    /// The instance applied (or tried) a write of `ops`: if it forgets, the reads
    /// before it no longer count.
    fn wrote<B: AsRef<[u8]>>(&mut self, ops: &[Op<B>]) {
        if forgets_remembered(ops) {
            self.since = None;
        }
    }
}

/// A backend's write error as the import reports it.
fn write_error(e: WriteError) -> wit::WriteError {
    match e {
        WriteError::PreconditionFailed { key } => wit::WriteError::PreconditionFailed(key),
        WriteError::Store(e) => wit::WriteError::Backend(e.to_string()),
    }
}

impl wit::Host for StoreImport {
    fn get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        self.calls.get += 1;
        self.reading();
        self.backend.get(&key).map_err(|e| e.to_string())
    }

    fn get_many(&mut self, keys: Vec<Vec<u8>>) -> Result<Vec<Option<Vec<u8>>>, String> {
        self.calls.get_many += 1;
        self.reading();
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        self.backend.get_many(&keys).map_err(|e| e.to_string())
    }

    fn scan(&mut self, range: wit::ScanRange) -> Result<Vec<wit::Entry>, String> {
        self.calls.scan += 1;
        self.reading();
        let scan = Scan { start: range.start, end: range.end, limit: range.limit, reverse: range.reverse };
        let entries = self.backend.scan(&scan).map_err(|e| e.to_string())?;
        Ok(entries.into_iter().map(|(key, value)| wit::Entry { key, value }).collect())
    }

    /// Linked over by `write_in_place`, which reads the batch without copying it;
    /// this is the same operation on a batch the bindings lifted.
    fn write(&mut self, ops: Vec<wit::Op>) -> Result<(), wit::WriteError> {
        self.calls.write += 1;
        let refs: Vec<OpRef<'_>> = ops
            .iter()
            .map(|op| match op {
                wit::Op::Put(e) => OpRef::Put { key: &e.key, value: &e.value },
                wit::Op::PutIfAbsent(e) => OpRef::PutIfAbsent { key: &e.key, value: &e.value },
                wit::Op::Delete(key) => OpRef::Delete { key },
                wit::Op::DeleteRange((start, end)) => OpRef::DeleteRange { start, end: end.as_deref() },
            })
            .collect();
        let written = self.backend.write(&refs).map_err(write_error);
        self.wrote(&refs);
        written
    }

    fn recall(&mut self, key: Vec<u8>) -> Option<Vec<u8>> {
        self.backend.bodies().recall(&key)
    }

    fn remember(&mut self, key: Vec<u8>, value: Vec<u8>) {
        let bodies = self.backend.bodies();
        bodies.remember(&key, &value, self.since.unwrap_or_else(|| bodies.generation()));
    }
}

/// The store import's interface name.
const STORE_INTERFACE: &str = "ledger:node/store@0.1.0";

/// Links the store import into `linker`, for wasmtime stores whose data holds their
/// instance's [`StoreImport`] where `import` finds it.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    import: fn(&mut T) -> &mut StoreImport,
) -> anyhow::Result<()> {
    NodeApi::add_to_linker::<T, HasSelf<StoreImport>>(linker, import).context("linking the store import")?;
    // `write` again, reading the batch in place (see `write_in_place`).
    linker.allow_shadowing(true);
    linker
        .instance(STORE_INTERFACE)
        .and_then(|mut store| store.func_wrap("write", move |cx, ops| write_in_place(cx, ops, import)))
        .context("linking the store import's write")?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The store import's `write` types, lifted as views of the component's memory: an
/// ingest batch writes tens of megabytes, and the generated bindings would copy every
/// key and value into a vector of its own before the backend copies them again.
mod in_place {
    use wasmtime::component::{ComponentType, Lift, WasmList};

    /// `entry`
    #[derive(ComponentType, Lift)]
    #[component(record)]
    pub struct Entry {
        pub key: WasmList<u8>,
        pub value: WasmList<u8>,
    }

    /// `op`
    #[derive(ComponentType, Lift)]
    #[component(variant)]
    pub enum Op {
        #[component(name = "put")]
        Put(Entry),
        #[component(name = "put-if-absent")]
        PutIfAbsent(Entry),
        #[component(name = "delete")]
        Delete(WasmList<u8>),
        #[component(name = "delete-range")]
        DeleteRange((WasmList<u8>, Option<WasmList<u8>>)),
    }
}

/// The store import's `write`, with the batch read where the component wrote it.
fn write_in_place<T>(
    mut cx: StoreContextMut<'_, T>,
    (ops,): (WasmList<in_place::Op>,),
    import: fn(&mut T) -> &mut StoreImport,
) -> wasmtime::Result<(Result<(), wit::WriteError>,)> {
    let own = import(cx.data_mut());
    own.calls.write += 1;
    let backend = Arc::clone(&own.backend);
    let ops = ops.iter(&mut cx)?.collect::<wasmtime::Result<Vec<in_place::Op>>>()?;
    let (written, forgets) = {
        let cx = &cx;
        let bytes = |list: &WasmList<u8>| list.as_le_slice(cx);
        let refs: Vec<OpRef<'_>> = ops
            .iter()
            .map(|op| match op {
                in_place::Op::Put(e) => OpRef::Put { key: bytes(&e.key), value: bytes(&e.value) },
                in_place::Op::PutIfAbsent(e) => OpRef::PutIfAbsent { key: bytes(&e.key), value: bytes(&e.value) },
                in_place::Op::Delete(key) => OpRef::Delete { key: bytes(key) },
                in_place::Op::DeleteRange((start, end)) => {
                    OpRef::DeleteRange { start: bytes(start), end: end.as_ref().map(bytes) }
                }
            })
            .collect();
        (backend.write(&refs).map_err(write_error), forgets_remembered(&refs))
    };
    if forgets {
        import(cx.data_mut()).since = None;
    }
    Ok((written,))
}

#[cfg(test)]
mod tests {
    use wit::Host as _;

    use super::*;
    use crate::backend::MemoryBackend;

    const RESET: OpRef<'static> = OpRef::DeleteRange { start: b"", end: None };

    #[test]
    fn a_value_rendered_from_reads_a_reset_by_another_instance_overtook_is_not_kept() {
        let backend: Arc<dyn Backend> = Arc::new(MemoryBackend::new());
        let mut import = StoreImport::new(Arc::clone(&backend));
        import.begin();
        import.get(b"update".to_vec()).expect("a read");
        backend.write(&[RESET]).expect("another instance's reset");
        import.remember(b"rendered".to_vec(), b"stale".to_vec());
        assert_eq!(import.recall(b"rendered".to_vec()), None);
        // The next call reads the new state.
        import.begin();
        import.get(b"update".to_vec()).expect("a read");
        import.remember(b"rendered".to_vec(), b"fresh".to_vec());
        assert_eq!(import.recall(b"rendered".to_vec()), Some(b"fresh".to_vec()));
    }

    #[test]
    fn what_an_instance_remembers_after_its_own_range_delete_is_kept() {
        let backend: Arc<dyn Backend> = Arc::new(MemoryBackend::new());
        let mut import = StoreImport::new(Arc::clone(&backend));
        import.begin();
        import.get(b"k".to_vec()).expect("a read");
        import.write(vec![wit::Op::DeleteRange((b"a".to_vec(), None))]).expect("its own range delete");
        import.remember(b"r".to_vec(), b"v".to_vec());
        assert_eq!(import.recall(b"r".to_vec()), Some(b"v".to_vec()));
        // A write that forgets nothing leaves the noted generation as it was.
        let put = wit::Op::Put(wit::Entry { key: b"k".to_vec(), value: b"v".to_vec() });
        import.get(b"k".to_vec()).expect("a read");
        backend.write(&[RESET]).expect("another instance's reset");
        import.write(vec![put]).expect("a put");
        import.remember(b"s".to_vec(), b"stale".to_vec());
        assert_eq!(import.recall(b"s".to_vec()), None);
    }
}
