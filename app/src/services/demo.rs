//! A small demo catalog for `make run`, loaded only into an empty database and only
//! through the service functions, so it obeys every rule real data does.

use crate::db::{Db, sql};
use crate::error::AppResult;
use crate::model::{InventoryUpdate, NewCategory, NewPet, PetStatus};
use crate::services::{categories, inventory, pets};

const CATALOG: &[(&str, &str, &[(&str, PetStatus, i64)])] = &[
    (
        "Dogs",
        "Loyal companions of every size.",
        &[
            ("Rex", PetStatus::Available, 3),
            ("Bella", PetStatus::Available, 1),
            ("Max", PetStatus::Pending, 0),
            ("Luna", PetStatus::Sold, 0),
        ],
    ),
    (
        "Cats",
        "Independent, curious and soft.",
        &[("Whiskers", PetStatus::Available, 2), ("Misty", PetStatus::Available, 5), ("Shadow", PetStatus::Pending, 0)],
    ),
    ("Birds", "Songbirds and talkers.", &[("Tweety", PetStatus::Available, 8), ("Kiwi", PetStatus::Sold, 0)]),
    ("Fish", "Calm colour for any room.", &[("Nemo", PetStatus::Available, 12), ("Bubbles", PetStatus::Available, 20)]),
    (
        "Reptiles",
        "Scales, shells and patience.",
        &[("Spike", PetStatus::Available, 1), ("Shelly", PetStatus::Pending, 0)],
    ),
];

/// Loads the demo catalog when the store has no categories and no pets. Returns
/// whether it did.
pub async fn seed_if_empty(db: &Db) -> AppResult<bool> {
    let (categories_n, pets_n) = sql::pets::catalog_size(db).await?;
    if categories_n + pets_n > 0 {
        return Ok(false);
    }
    for (category_name, description, animals) in CATALOG {
        let category = categories::create(
            db,
            NewCategory { name: (*category_name).into(), description: Some((*description).into()) },
        )
        .await?;
        for (name, status, stock) in *animals {
            let pet =
                pets::create(db, NewPet { name: (*name).into(), category_id: category.id, status: Some(*status) })
                    .await?;
            if *stock > 0 {
                inventory::set(db, pet.id, InventoryUpdate { quantity: *stock }).await?;
            }
        }
    }
    Ok(true)
}
