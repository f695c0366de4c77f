//! Images through the mirror: what `--registry-mirror` makes of every image
//! the operator applies, by the catalog's pinned digests.

use crate::oci::images::ImageMap;
use crate::oci::Mirrors;
use crate::operator::model::catalog::Catalog;

/// The rewrite for `--registry-mirror`: the mirrors, and the pins' digests.
pub fn image_map(catalog: &Catalog, mirrors: Mirrors) -> ImageMap {
    ImageMap {
        mirrors,
        digests: catalog
            .image
            .iter()
            .filter(|i| !i.digest.is_empty())
            .map(|i| (i.tagged(), i.digest.clone()))
            .collect(),
    }
}
