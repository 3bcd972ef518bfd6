use super::*;
use crate::conformance;

/// Runs the store conformance suite on a fresh embedded store.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let tmp = tempfile::tempdir().unwrap();
            conformance::$name(&EmbeddedStore::new(tmp.path()));
        }
    )*};
}

conformance!(
    writes_and_searches_a_generation,
    filters_apply_to_both_lists,
    incremental_generation_keeps_changes_and_deletes,
    abandoned_writer_leaves_current_generation_serving,
    changed_settings_start_fresh,
    one_writer_at_a_time,
    import_keeps_ids,
    remove_forgets_a_skill,
    reimport_replaces_the_generation,
);

#[test]
fn rejects_unsafe_skill_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    for bad in ["..", "a/b", "", "/etc"] {
        assert!(store.open(bad).is_err(), "{bad}");
    }
}
