//! The state table of contract.md ("States and the rules that link orders, inventory
//! and status") as pure functions, so each row can be tested on its own. The service
//! functions read the current state inside a transaction, ask these what follows, and
//! write the answer in the same transaction.

use crate::error::{AppError, AppResult, ErrorCode};
use crate::model::PetStatus;

/// A pet's stock-relevant state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PetState {
    pub status: PetStatus,
    pub stock: i64,
}

/// A new pet's stock: 1 when it is available, else 0.
pub fn initial_stock(status: PetStatus) -> i64 {
    if status == PetStatus::Available { 1 } else { 0 }
}

/// "set inventory to n": n > 0 → available; n = 0 → pending while open orders hold
/// the pet, else sold.
pub fn set_inventory(n: i64, open_orders: i64) -> PetState {
    let status = if n > 0 {
        PetStatus::Available
    } else if open_orders > 0 {
        PetStatus::Pending
    } else {
        PetStatus::Sold
    };
    PetState { status, stock: n }
}

/// "admin sets status": available ↔ pending freely (a hold); to sold only with no
/// open orders, which empties the stock; sold back to available only with stock.
pub fn admin_set_status(current: PetState, requested: PetStatus, open_orders: i64) -> AppResult<PetState> {
    use PetStatus::{Available, Pending, Sold};
    let refuse = |why: &str| {
        Err(AppError::conflict(
            ErrorCode::InvalidTransition,
            format!("cannot change status from {} to {requested}: {why}", current.status),
        ))
    };
    match (current.status, requested) {
        (from, to) if from == to => Ok(current),
        (Available, Pending) | (Pending, Available) => Ok(PetState { status: requested, ..current }),
        (_, Sold) if open_orders > 0 => refuse("open orders still hold this pet"),
        (_, Sold) => Ok(PetState { status: Sold, stock: 0 }),
        (Sold, Available) if current.stock > 0 => Ok(PetState { status: Available, ..current }),
        (Sold, Available) => refuse("there is no stock; set the inventory instead"),
        (Sold, Pending) => refuse("a sold pet can only become available, and only with stock"),
        _ => unreachable!("every pair of statuses is handled above"),
    }
}

/// "place order (q units)": the pet must be available with stock ≥ q; the stock
/// drops by q, and a pet whose last unit is reserved becomes pending.
pub fn place_order(current: PetState, quantity: i64) -> AppResult<PetState> {
    if current.status != PetStatus::Available {
        return Err(AppError::conflict(
            ErrorCode::PetNotAvailable,
            format!("the pet is {}, not available", current.status),
        ));
    }
    if current.stock < quantity {
        return Err(AppError::conflict(
            ErrorCode::InsufficientStock,
            format!("only {} in stock, {quantity} ordered", current.stock),
        ));
    }
    let stock = current.stock - quantity;
    let status = if stock == 0 { PetStatus::Pending } else { PetStatus::Available };
    Ok(PetState { status, stock })
}

/// "cancel open order": the units go back; a pending pet with stock is available again.
/// (The order being open is the caller's precondition: `order_completed` otherwise.)
pub fn cancel_order(current: PetState, quantity: i64) -> PetState {
    let stock = current.stock + quantity;
    let status = if current.status == PetStatus::Pending && stock > 0 { PetStatus::Available } else { current.status };
    PetState { status, stock }
}

/// "complete order": with no stock left and no other open order, the pet is sold.
pub fn complete_order(current: PetState, other_open_orders: i64) -> PetState {
    if current.stock == 0 && other_open_orders == 0 { PetState { status: PetStatus::Sold, stock: 0 } } else { current }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PetStatus::*;

    #[test]
    fn place_order_row() {
        assert_eq!(place_order(state(Available, 5), 2).unwrap(), state(Available, 3));
        assert_eq!(place_order(state(Available, 2), 2).unwrap(), state(Pending, 0), "last unit → pending");
        assert_eq!(place_order(state(Pending, 5), 1).unwrap_err().code, ErrorCode::PetNotAvailable);
        assert_eq!(place_order(state(Sold, 0), 1).unwrap_err().code, ErrorCode::PetNotAvailable);
        assert_eq!(place_order(state(Available, 1), 2).unwrap_err().code, ErrorCode::InsufficientStock);
        assert_eq!(place_order(state(Available, 0), 1).unwrap_err().code, ErrorCode::InsufficientStock);
    }

    #[test]
    fn cancel_order_row() {
        assert_eq!(cancel_order(state(Pending, 0), 2), state(Available, 2), "pending with stock → available");
        assert_eq!(cancel_order(state(Available, 3), 1), state(Available, 4));
        // A hold (pending set by staff) with stock is released too; sold stays sold.
        assert_eq!(cancel_order(state(Sold, 0), 1), state(Sold, 1));
    }

    #[test]
    fn complete_order_row() {
        assert_eq!(complete_order(state(Pending, 0), 0), state(Sold, 0), "no stock, no other open order → sold");
        assert_eq!(complete_order(state(Pending, 0), 1), state(Pending, 0), "another open order holds it");
        assert_eq!(complete_order(state(Available, 2), 0), state(Available, 2), "stock left");
    }

    fn state(status: PetStatus, stock: i64) -> PetState {
        PetState { status, stock }
    }

    #[test]
    fn new_pet_stock_follows_its_status() {
        assert_eq!(initial_stock(Available), 1);
        assert_eq!(initial_stock(Pending), 0);
        assert_eq!(initial_stock(Sold), 0);
    }

    #[test]
    fn set_inventory_row() {
        assert_eq!(set_inventory(5, 0), state(Available, 5));
        assert_eq!(set_inventory(5, 2), state(Available, 5));
        assert_eq!(set_inventory(0, 2), state(Pending, 0));
        assert_eq!(set_inventory(0, 0), state(Sold, 0));
    }

    #[test]
    fn hold_and_release_are_always_allowed() {
        assert_eq!(admin_set_status(state(Available, 3), Pending, 0).unwrap(), state(Pending, 3));
        assert_eq!(admin_set_status(state(Pending, 0), Available, 1).unwrap(), state(Available, 0));
        assert_eq!(admin_set_status(state(Sold, 0), Sold, 0).unwrap(), state(Sold, 0));
    }

    #[test]
    fn to_sold_needs_no_open_orders_and_empties_stock() {
        assert_eq!(admin_set_status(state(Available, 4), Sold, 0).unwrap(), state(Sold, 0));
        assert_eq!(admin_set_status(state(Pending, 0), Sold, 0).unwrap(), state(Sold, 0));
        let err = admin_set_status(state(Pending, 0), Sold, 1).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidTransition);
    }

    #[test]
    fn from_sold_only_to_available_with_stock() {
        assert_eq!(admin_set_status(state(Sold, 2), Available, 0).unwrap(), state(Available, 2));
        assert_eq!(admin_set_status(state(Sold, 0), Available, 0).unwrap_err().code, ErrorCode::InvalidTransition);
        assert_eq!(admin_set_status(state(Sold, 2), Pending, 0).unwrap_err().code, ErrorCode::InvalidTransition);
    }
}
