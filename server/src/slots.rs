//! Places for what a client holds open (connections, event streams), bounded per client
//! and in all, and shared fairly among networks when they run out.
//!
//! A client is counted at three widths: its address (an IPv6 one by its /64, as the
//! rate limits group it), its block (an IPv4 /24, an IPv6 /56: a home or an office)
//! and its network (an IPv4 /16, an IPv6 /48: a provider's customer, a cheap server's
//! whole allocation), each with a limit of its own, and a key's streams by the key.
//! When every place is taken, a newcomer from a network holding fewer places than the
//! network holding the most takes the oldest place of that one (whose holder is told,
//! and ends it): one network cannot keep the others out by filling the budget first,
//! however many addresses it has.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// How many places there are, in all and for each holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub in_all: usize,
    pub per_address: usize,
    pub per_block: usize,
    pub per_network: usize,
    /// For streams opened with a key (`None`: not counted by key).
    pub per_key: Option<usize>,
}

/// Who holds a place: a client at one of its widths, or a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Holder {
    Address(IpAddr),
    Block(IpAddr),
    Network(IpAddr),
    Key(i64),
}

/// Why a place was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The client (at one of its widths) has all its places.
    Client,
    /// The key has all its places.
    Key,
    /// Every place is taken, and none could be taken back for this client.
    InAll,
}

/// The network, block and address `ip` is counted as (IPv4 inside IPv6 as itself).
fn widths(ip: IpAddr) -> [Holder; 3] {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let masked = |prefix: u32| IpAddr::from((bits & (u32::MAX << (32 - prefix))).to_be_bytes());
            [Holder::Network(masked(16)), Holder::Block(masked(24)), Holder::Address(masked(32))]
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let masked = |prefix: u32| IpAddr::from((bits & (u128::MAX << (128 - prefix))).to_be_bytes());
            [Holder::Network(masked(48)), Holder::Block(masked(56)), Holder::Address(masked(64))]
        }
    }
}

pub struct Slots {
    budget: Budget,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Every place taken, by its number (the order places were taken in).
    taken: HashMap<u64, Taken>,
    counts: HashMap<Holder, usize>,
    next: u64,
}

struct Taken {
    holders: Vec<Holder>,
    /// Told when the place is taken back.
    give_way: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Slots {
    pub fn new(budget: Budget) -> Arc<Slots> {
        Arc::new(Slots { budget, state: Mutex::new(State::default()) })
    }

    pub fn budget(&self) -> Budget {
        self.budget
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a place for a client at `ip` (`None`: counted in all only, as a trusted
    /// proxy or an in-process call is), and for `key` when the budget counts keys.
    pub fn take(self: &Arc<Slots>, ip: Option<IpAddr>, key: Option<i64>) -> Result<Slot, Refusal> {
        let mut holders = Vec::with_capacity(4);
        if let Some(ip) = ip {
            holders.extend(widths(ip));
        }
        if let (Some(key), Some(_)) = (key, self.budget.per_key) {
            holders.push(Holder::Key(key));
        }
        let mut state = self.state();
        for holder in &holders {
            if state.counts.get(holder).copied().unwrap_or(0) >= self.limit(*holder) {
                return Err(if matches!(holder, Holder::Key(_)) { Refusal::Key } else { Refusal::Client });
            }
        }
        if state.taken.len() >= self.budget.in_all {
            let network = holders.iter().copied().find(|holder| matches!(holder, Holder::Network(_)));
            if !state.take_back_for(network) {
                return Err(Refusal::InAll);
            }
        }
        let (give_way, given_way) = tokio::sync::oneshot::channel();
        let number = state.next;
        state.next += 1;
        for holder in &holders {
            *state.counts.entry(*holder).or_default() += 1;
        }
        state.taken.insert(number, Taken { holders, give_way: Some(give_way) });
        Ok(Slot { slots: self.clone(), number, given_way })
    }

    fn limit(&self, holder: Holder) -> usize {
        match holder {
            Holder::Address(_) => self.budget.per_address,
            Holder::Block(_) => self.budget.per_block,
            Holder::Network(_) => self.budget.per_network,
            Holder::Key(_) => self.budget.per_key.unwrap_or(usize::MAX),
        }
    }

    /// Takes every place back (the server is shutting down): each holder is told.
    pub fn take_back_all(&self) {
        let mut state = self.state();
        let numbers: Vec<u64> = state.taken.keys().copied().collect();
        for number in numbers {
            if let Some(mut freed) = state.free(number)
                && let Some(give_way) = freed.give_way.take()
            {
                let _ = give_way.send(());
            }
        }
    }

    /// Places taken now, in all.
    pub fn taken(&self) -> usize {
        self.state().taken.len()
    }
}

impl State {
    /// Frees the oldest place of the network holding the most, for a newcomer from
    /// `network` (none: a client counted in all only), when that network holds at least
    /// two more than the newcomer's would then (so two networks never take places back
    /// from each other in turn). Whether one was freed.
    fn take_back_for(&mut self, network: Option<Holder>) -> bool {
        let theirs = network.and_then(|network| self.counts.get(&network).copied()).unwrap_or(0);
        let most = self
            .counts
            .iter()
            .filter(|(holder, _)| matches!(holder, Holder::Network(_)))
            .max_by_key(|(_, count)| **count)
            .map(|(holder, count)| (*holder, *count));
        let Some((largest, count)) = most.filter(|(_, count)| *count > theirs + 1) else { return false };
        debug_assert!(count > 1);
        let oldest = self.taken.iter().filter(|(_, taken)| taken.holders.contains(&largest)).map(|(n, _)| *n).min();
        let Some(mut freed) = oldest.and_then(|number| self.free(number)) else { return false };
        if let Some(give_way) = freed.give_way.take() {
            let _ = give_way.send(());
        }
        true
    }

    fn free(&mut self, number: u64) -> Option<Taken> {
        let taken = self.taken.remove(&number)?;
        for holder in &taken.holders {
            if let Some(count) = self.counts.get_mut(holder) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(holder);
                }
            }
        }
        Some(taken)
    }
}

/// A place, given back when dropped.
pub struct Slot {
    slots: Arc<Slots>,
    number: u64,
    given_way: tokio::sync::oneshot::Receiver<()>,
}

impl Slot {
    /// Resolves when the place has been taken back for a newcomer from another network:
    /// its holder should end what it holds.
    pub async fn taken_back(&mut self) {
        // A sender dropped without a word: the place is not taken back (never happens
        // while the place is held), so this waits for good.
        if (&mut self.given_way).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.state().free(self.number);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    const SMALL: Budget = Budget { in_all: 10, per_address: 2, per_block: 3, per_network: 6, per_key: Some(2) };

    #[test]
    fn each_width_has_its_limit_and_a_place_comes_back_when_dropped() {
        let slots = Slots::new(SMALL);
        let a = [slots.take(ip("2001:db8:1:2::1"), None).unwrap(), slots.take(ip("2001:db8:1:2::2"), None).unwrap()];
        assert_eq!(slots.take(ip("2001:db8:1:2:ffff::9"), None).err(), Some(Refusal::Client), "one /64");
        let b = slots.take(ip("2001:db8:1:3::1"), None).unwrap();
        assert_eq!(slots.take(ip("2001:db8:1:4::1"), None).err(), Some(Refusal::Client), "one /56 has three");
        let c =
            [slots.take(ip("2001:db8:1:100::1"), None).unwrap(), slots.take(ip("2001:db8:1:200::1"), None).unwrap()];
        let d = slots.take(ip("2001:db8:1:300::1"), None).unwrap();
        assert_eq!(slots.take(ip("2001:db8:1:400::1"), None).err(), Some(Refusal::Client), "one /48 has six");
        assert!(slots.take(ip("2001:db8:2::1"), None).is_ok(), "another /48");
        drop(d);
        assert!(slots.take(ip("2001:db8:1:400::1"), None).is_ok(), "given back");
        // IPv4: the address, its /24 and its /16; mapped addresses are themselves.
        let e = [slots.take(ip("192.0.2.1"), None).unwrap(), slots.take(ip("::ffff:192.0.2.1"), None).unwrap()];
        assert_eq!(slots.take(ip("192.0.2.1"), None).err(), Some(Refusal::Client));
        // Keys, when counted.
        let k = [slots.take(None, Some(7)).unwrap(), slots.take(None, Some(7)).unwrap()];
        assert_eq!(slots.take(None, Some(7)).err(), Some(Refusal::Key));
        drop((a, b, c, e, k));
        assert_eq!(slots.taken(), 0);
    }

    #[test]
    fn when_all_are_taken_the_network_holding_most_gives_way_oldest_first() {
        let slots = Slots::new(Budget { per_block: 6, ..SMALL });
        let mut crowd: Vec<Slot> =
            (0..6).map(|n| slots.take(ip(&format!("2001:db8:1:{n}::1")), None).unwrap()).collect();
        let others: Vec<Slot> = (0..4).map(|n| slots.take(ip(&format!("198.51.{n}.1")), None).unwrap()).collect();
        assert_eq!(slots.taken(), 10);
        // A newcomer from a network with none: the crowd's oldest gives way.
        let newcomer = slots.take(ip("203.0.113.5"), None).unwrap();
        assert_eq!(slots.taken(), 10);
        let mut oldest = crowd.remove(0);
        assert!(futures_util::FutureExt::now_or_never(oldest.taken_back()).is_some(), "told to end");
        assert!(futures_util::FutureExt::now_or_never(crowd[0].taken_back()).is_none(), "the others are not");
        drop(oldest);
        assert_eq!(slots.taken(), 10, "its drop frees nothing twice");
        // Two more from the newcomer's network: each time the network holding most (by
        // then four) gives way, until none holds two more than the newcomer's.
        let more = [slots.take(ip("203.0.113.6"), None).unwrap(), slots.take(ip("203.0.114.6"), None).unwrap()];
        assert_eq!(slots.taken(), 10);
        assert_eq!(slots.take(ip("203.0.115.6"), None).err(), Some(Refusal::InAll), "no see-saw");
        assert_eq!(slots.take(ip("2001:db8:1:9::1"), None).err(), Some(Refusal::InAll), "the crowd's own");
        drop((newcomer, more, crowd, others));
        assert_eq!(slots.taken(), 0);
    }

    #[test]
    fn at_shutdown_every_place_is_taken_back() {
        let slots = Slots::new(SMALL);
        let mut held = [slots.take(ip("192.0.2.1"), None).unwrap(), slots.take(None, Some(3)).unwrap()];
        slots.take_back_all();
        assert_eq!(slots.taken(), 0);
        for slot in &mut held {
            assert!(futures_util::FutureExt::now_or_never(slot.taken_back()).is_some());
        }
    }
}
