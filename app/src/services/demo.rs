//! A small demo catalog for `make run`, loaded only into an empty database and only
//! through the service functions, so it obeys every rule real data does.
//!
//! Every pet has a picture, drawn for this project: `app/demo/<kind>.svg` with the
//! pet's colours, put through the store's own photo pipeline by the `demo_photos`
//! example (`make demo-photos`), which writes `app/demo/photos/<pet>-<width>.webp`.
//! Those files are part of the binary; loading the catalog only stores them.

use crate::db::{Db, sql};
use crate::error::AppResult;
use crate::model::{Field, InventoryUpdate, NewCategory, NewPet, PHOTO_WIDTHS, PetStatus};
use crate::services::{categories, inventory, pets, photos};

/// How one demo pet's picture is drawn: its template (`app/demo/<kind>.svg`) and the
/// colours put in the template's `{placeholders}`.
pub struct Picture {
    pub kind: &'static str,
    pub colours: &'static [(&'static str, &'static str)],
}

/// One demo pet.
struct DemoPet {
    name: &'static str,
    status: PetStatus,
    stock: i64,
    /// Minor units of the store's currency.
    price: i64,
    description: &'static str,
    picture: Picture,
    /// Each width's WebP, as the example wrote them.
    photo: [&'static [u8]; 3],
}

/// The WebP files of a demo pet (`app/demo/photos/<slug>-<width>.webp`). Building the
/// example that writes them (feature `demo-photos`) leaves them out, so that it builds
/// before they exist.
#[cfg(not(feature = "demo-photos"))]
macro_rules! photo {
    ($slug:literal) => {
        [
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/demo/photos/", $slug, "-320.webp")),
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/demo/photos/", $slug, "-640.webp")),
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/demo/photos/", $slug, "-1280.webp")),
        ]
    };
}
#[cfg(feature = "demo-photos")]
macro_rules! photo {
    ($slug:literal) => {
        [&[], &[], &[]]
    };
}

const DOGS: &[DemoPet] = &[
    DemoPet {
        name: "Rex",
        status: PetStatus::Available,
        stock: 3,
        price: 45_000,
        description: "A cheerful beagle with a nose for adventure. Rex loves long walks, knows \"sit\" and \
                      \"paw\", and gets on with children and other dogs.\n\nTwo years old, vaccinated and chipped.",
        picture: Picture {
            kind: "dog",
            colours: &[
                ("bg1", "#cfe8f7"),
                ("bg2", "#eef7fb"),
                ("ground", "#a5d27f"),
                ("main", "#b5773f"),
                ("light", "#f3e2c7"),
                ("shade", "#7a4a24"),
                ("accent", "#d94a3a"),
            ],
        },
        photo: photo!("rex"),
    },
    DemoPet {
        name: "Bella",
        status: PetStatus::Available,
        stock: 1,
        price: 52_000,
        description: "A golden retriever puppy who has never met a stranger. Bella is gentle, patient and \
                      happiest with a ball in her mouth.",
        picture: Picture {
            kind: "dog",
            colours: &[
                ("bg1", "#fde2c8"),
                ("bg2", "#fff4e8"),
                ("ground", "#b7d98b"),
                ("main", "#e0b060"),
                ("light", "#f7ead0"),
                ("shade", "#b8863b"),
                ("accent", "#6d5dd3"),
            ],
        },
        photo: photo!("bella"),
    },
    DemoPet {
        name: "Max",
        status: PetStatus::Pending,
        stock: 0,
        price: 39_000,
        description: "A calm labrador mix, happy on the sofa and keen on the park. Max is reserved for a \
                      family right now.",
        picture: Picture {
            kind: "dog",
            colours: &[
                ("bg1", "#e3dcf5"),
                ("bg2", "#f5f2fc"),
                ("ground", "#9cc98a"),
                ("main", "#3a3a3c"),
                ("light", "#d9d4cc"),
                ("shade", "#1f1f21"),
                ("accent", "#2d9cdb"),
            ],
        },
        photo: photo!("max"),
    },
    DemoPet {
        name: "Luna",
        status: PetStatus::Sold,
        stock: 0,
        price: 60_000,
        description: "A blue-eyed husky with energy for two. Luna has found her home.",
        picture: Picture {
            kind: "dog",
            colours: &[
                ("bg1", "#d4f0e6"),
                ("bg2", "#f0faf6"),
                ("ground", "#9fd0a8"),
                ("main", "#8f99a6"),
                ("light", "#f1f3f5"),
                ("shade", "#5f6a77"),
                ("accent", "#e07a5f"),
            ],
        },
        photo: photo!("luna"),
    },
];

const CATS: &[DemoPet] = &[
    DemoPet {
        name: "Whiskers",
        status: PetStatus::Available,
        stock: 2,
        price: 18_000,
        description: "An orange tabby who supervises everything from the windowsill. Whiskers likes a quiet \
                      home, a warm lap and dinner on time.",
        picture: Picture {
            kind: "cat",
            colours: &[
                ("bg1", "#fbe9d0"),
                ("bg2", "#f6d2a8"),
                ("ground", "#c99a6b"),
                ("main", "#e8913c"),
                ("light", "#fbe3c3"),
                ("shade", "#b8641f"),
                ("accent", "#f4a7b0"),
                ("eye", "#9ccc65"),
                ("whisker", "#5b3a1e"),
            ],
        },
        photo: photo!("whiskers"),
    },
    DemoPet {
        name: "Misty",
        status: PetStatus::Available,
        stock: 5,
        price: 22_000,
        description: "A soft grey shorthair with a loud purr. Misty is playful in the morning and asleep by \
                      noon.",
        picture: Picture {
            kind: "cat",
            colours: &[
                ("bg1", "#dbe7f3"),
                ("bg2", "#c2d3e6"),
                ("ground", "#8fa3b8"),
                ("main", "#9aa3ad"),
                ("light", "#e7eaee"),
                ("shade", "#6b7480"),
                ("accent", "#f4a7b0"),
                ("eye", "#4fc3f7"),
                ("whisker", "#3b4450"),
            ],
        },
        photo: photo!("misty"),
    },
    DemoPet {
        name: "Shadow",
        status: PetStatus::Pending,
        stock: 0,
        price: 15_000,
        description: "A sleek black cat with golden eyes, quiet and devoted once he trusts you.",
        picture: Picture {
            kind: "cat",
            colours: &[
                ("bg1", "#ece4f6"),
                ("bg2", "#d6c8ea"),
                ("ground", "#a793c4"),
                ("main", "#2e2b2b"),
                ("light", "#5a5454"),
                ("shade", "#171515"),
                ("accent", "#c48b9f"),
                ("eye", "#ffd54f"),
                ("whisker", "#d9d4cc"),
            ],
        },
        photo: photo!("shadow"),
    },
];

const BIRDS: &[DemoPet] = &[
    DemoPet {
        name: "Tweety",
        status: PetStatus::Available,
        stock: 8,
        price: 4_500,
        description: "A bright yellow canary who sings from sunrise. Comes with a care sheet for a first bird.",
        picture: Picture {
            kind: "bird",
            colours: &[
                ("bg1", "#e6f4ff"),
                ("bg2", "#b9dcf5"),
                ("ground", "#7cb36b"),
                ("main", "#f7d33c"),
                ("light", "#fff3b0"),
                ("shade", "#e0a81c"),
                ("accent", "#f49a8b"),
            ],
        },
        photo: photo!("tweety"),
    },
    DemoPet {
        name: "Kiwi",
        status: PetStatus::Sold,
        stock: 0,
        price: 32_000,
        description: "A green parrot with a vocabulary of twenty words and opinions on all of them.",
        picture: Picture {
            kind: "bird",
            colours: &[
                ("bg1", "#fff6dc"),
                ("bg2", "#f7dfa0"),
                ("ground", "#6aa84f"),
                ("main", "#4caf50"),
                ("light", "#c5e1a5"),
                ("shade", "#2e7d32"),
                ("accent", "#ef5350"),
            ],
        },
        photo: photo!("kiwi"),
    },
];

const FISH: &[DemoPet] = &[
    DemoPet {
        name: "Nemo",
        status: PetStatus::Available,
        stock: 12,
        price: 1_500,
        description: "A clownfish, orange and white and always busy. Happy in a reef tank with an anemone \
                      to call home.",
        picture: Picture {
            kind: "fish",
            colours: &[
                ("bg1", "#7fd3f0"),
                ("bg2", "#2a8fc0"),
                ("ground", "#3f9d5a"),
                ("main", "#f57c1f"),
                ("stripe", "#ffffff"),
                ("accent", "#1c1917"),
                ("shade", "#d35400"),
            ],
        },
        photo: photo!("nemo"),
    },
    DemoPet {
        name: "Bubbles",
        status: PetStatus::Available,
        stock: 20,
        price: 2_900,
        description: "A blue tang with a yellow tail who glides rather than swims. Best kept with friends in \
                      a large tank.",
        picture: Picture {
            kind: "fish",
            colours: &[
                ("bg1", "#8ee3e0"),
                ("bg2", "#1f7f9f"),
                ("ground", "#2f8f6a"),
                ("main", "#3f7fe0"),
                ("stripe", "#2a4fa8"),
                ("accent", "#ffd23f"),
                ("shade", "#ffc20e"),
            ],
        },
        photo: photo!("bubbles"),
    },
];

const REPTILES: &[DemoPet] = &[
    DemoPet {
        name: "Spike",
        status: PetStatus::Available,
        stock: 1,
        price: 12_000,
        description: "A bearded dragon who enjoys a warm rock and a slow afternoon. Easy to handle and \
                      curious about everything.",
        picture: Picture {
            kind: "lizard",
            colours: &[
                ("bg1", "#fbd9a5"),
                ("bg2", "#f7ecd3"),
                ("ground", "#e3c18a"),
                ("main", "#c9a25a"),
                ("light", "#ecd9a8"),
                ("shade", "#8e6b2f"),
                ("accent", "#6d4c1f"),
            ],
        },
        photo: photo!("spike"),
    },
    DemoPet {
        name: "Shelly",
        status: PetStatus::Pending,
        stock: 0,
        price: 9_500,
        description: "A box turtle in no hurry at all. Shelly is reserved and will be on her way soon.",
        picture: Picture {
            kind: "turtle",
            colours: &[
                ("bg1", "#dff3e4"),
                ("bg2", "#f4fbf5"),
                ("ground", "#8cc56b"),
                ("main", "#6b8e3a"),
                ("light", "#b8cf82"),
                ("shade", "#4a6a26"),
                ("accent", "#a3c76b"),
            ],
        },
        photo: photo!("shelly"),
    },
];

const CATALOG: &[(&str, &str, &[DemoPet])] = &[
    ("Dogs", "Loyal companions of every size.", DOGS),
    ("Cats", "Independent, curious and soft.", CATS),
    ("Birds", "Songbirds and talkers.", BIRDS),
    ("Fish", "Calm colour for any room.", FISH),
    ("Reptiles", "Scales, shells and patience.", REPTILES),
];

/// Every demo pet's picture, by the file name its widths are written under (the pet's
/// name in lower case), for the example that draws them.
pub fn pictures() -> impl Iterator<Item = (String, &'static Picture)> {
    CATALOG.iter().flat_map(|(_, _, pets)| pets.iter()).map(|pet| (pet.name.to_lowercase(), &pet.picture))
}

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
        for animal in *animals {
            let new = NewPet {
                name: animal.name.into(),
                category_id: category.id,
                status: Some(animal.status),
                description: Field::Set(animal.description.into()),
                price: Field::Set(animal.price),
            };
            let pet = pets::create(db, new).await?;
            if animal.stock > 0 {
                inventory::set(db, pet.id, InventoryUpdate { quantity: animal.stock }).await?;
            }
            if animal.photo.iter().all(|bytes| !bytes.is_empty()) {
                let variants = PHOTO_WIDTHS.iter().zip(animal.photo).map(|(width, bytes)| (*width, bytes.to_vec()));
                photos::store(db, pet.id, &photos::Encoded::new(variants.collect())).await?;
            }
        }
    }
    Ok(true)
}
