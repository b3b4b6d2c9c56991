//! Writing the baseline's objects as one pack: on filesystems where creating a file costs about a
//! millisecond, ten thousand loose objects cost ten seconds, one pack and its index cost two files.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use gix_pack::data::output;

/// One object, hashed and deflated, ready to go into a pack.
pub(crate) struct PackedObject {
    pub id: gix::ObjectId,
    entry: output::Entry,
}

/// Hash and deflate (at the fastest level) one object.
pub(crate) fn pack_object(kind: gix::objs::Kind, data: &[u8]) -> Result<PackedObject, gix::Error> {
    let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data)?;
    let entry = output::Entry::from_data(
        &output::Count::from_data(id, None),
        &gix::objs::Data::new(data, kind, gix::hash::Kind::Sha1),
        gix::zlib::Compression::BEST_SPEED,
    )?;
    Ok(PackedObject { id, entry })
}

/// Write `objects` as one pack with its index into `<objects_dir>/pack/`. Duplicates (equal
/// content at several paths) are written once.
pub(crate) fn write_pack(
    objects_dir: &Path,
    mut objects: Vec<PackedObject>,
) -> Result<(), gix::Error> {
    objects.sort_by_key(|o| o.id);
    objects.dedup_by(|a, b| a.id == b.id);
    let entries: Vec<output::Entry> = objects.into_iter().map(|o| o.entry).collect();
    let count = u32::try_from(entries.len()).unwrap_or(u32::MAX);
    let mut bytes = Vec::new();
    {
        let writer = output::bytes::FromEntriesIter::new(
            std::iter::once(Ok(entries)),
            &mut bytes,
            count,
            gix_pack::data::Version::V2,
            gix::hash::Kind::Sha1,
        );
        for step in writer {
            step?;
        }
    }
    let pack_dir = objects_dir.join("pack");
    std::fs::create_dir_all(&pack_dir).map_err(gix::Error::from_error)?;
    gix_pack::Bundle::write_to_directory(
        &mut bytes.as_slice(),
        Some(&pack_dir),
        &mut gix::progress::Discard,
        &AtomicBool::new(false),
        None::<gix::objs::find::Never>,
        gix::hash::Kind::Sha1,
        gix_pack::bundle::write::Options::default(),
    )?;
    Ok(())
}
