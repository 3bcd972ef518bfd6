use super::*;
use crate::conformance;

conformance::conformance_tests!(|_name: &str| {
    let tmp = tempfile::tempdir().unwrap();
    let store: Box<dyn Store> = Box::new(EmbeddedStore::new(tmp.path()));
    Some((tmp, store))
});

#[test]
fn rejects_unsafe_skill_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    for bad in ["..", "a/b", "", "/etc"] {
        assert!(store.open(bad).is_err(), "{bad}");
    }
}
