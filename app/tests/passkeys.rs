//! Passkeys' server side (`services::passkeys`) against a real store on either engine,
//! with a software authenticator of this file's own: a P-256 key that answers the
//! store's options as a browser and authenticator would (`none` attestation), or
//! answers them wrongly on purpose (another origin, another relying party, an old
//! challenge).

#![cfg(feature = "ssr")]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use app::db::{self, Db};
use app::error::ErrorCode;
use app::model::{Caller, NewApiKey, Plan, Role};
use app::services::access::{Access, ClientAddr, TrustedProxies};
use app::services::clock::Clock;
use app::services::limits::{BanPolicy, RateLimiter};
use app::services::passkeys::{self, CEREMONY_SECONDS, Ceremony, RECOVERY_CODES, RelyingParty};
use app::services::sessions::Opened;
use app::services::{keys, sessions};
use authenticator::{Answer, SoftPasskey};

const ORIGIN: &str = "http://localhost:3000";

/// As a browser at the store's own origin answers.
fn honest() -> Answer {
    Answer::honest_at(ORIGIN)
}
const START: i64 = 1_795_428_000;

struct Store {
    db: Db,
    access: Access,
    rp: RelyingParty,
    now: Arc<AtomicI64>,
    _dir: tempfile::TempDir,
}

impl Store {
    async fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::connect(&db::testing::scratch_url(dir.path()).await).await.unwrap();
        let now = Arc::new(AtomicI64::new(START));
        let clock = Clock::manual(now.clone());
        let limiter = RateLimiter::new(clock.clone(), BanPolicy { after_refusals: 3, seconds: 600 });
        let access = Access::new(db.clone(), clock, Arc::new(limiter), TrustedProxies::default());
        // As `make run` serves: on an address, so the relying party is localhost.
        let rp = RelyingParty::new("http://127.0.0.1:3000").unwrap();
        Store { db, access, rp, now, _dir: dir }
    }

    fn now(&self) -> i64 {
        self.now.load(Ordering::Relaxed)
    }

    async fn begin_sign_up(&self) -> Ceremony {
        passkeys::begin_sign_up(&self.db, &self.access, &self.rp, self.now(), client()).await.unwrap()
    }

    async fn finish_sign_up(&self, ceremony: &Ceremony, answer: &str) -> app::error::AppResult<app::model::NewAccount> {
        passkeys::finish_sign_up(&self.db, &self.access, &self.rp, self.now(), client(), &ceremony.token, answer).await
    }

    /// A new account, made with `passkey`.
    async fn sign_up(&self, passkey: &mut SoftPasskey) -> app::model::NewAccount {
        let ceremony = self.begin_sign_up().await;
        let answer = passkey.create(&ceremony.options, &honest());
        self.finish_sign_up(&ceremony, &answer).await.unwrap()
    }

    async fn begin_sign_in(&self) -> Ceremony {
        passkeys::begin_sign_in(&self.db, &self.rp, self.now()).await.unwrap()
    }

    async fn finish_sign_in(&self, ceremony: &Ceremony, answer: &str) -> app::error::AppResult<Caller> {
        passkeys::finish_sign_in(&self.db, &self.access, &self.rp, self.now(), client(), &ceremony.token, answer)
            .await
            .map(|(caller, _)| caller)
    }

    async fn sign_in(&self, passkey: &mut SoftPasskey, how: &Answer) -> app::error::AppResult<Caller> {
        self.sign_in_with(passkey, how).await.map(|(caller, _)| caller)
    }

    /// Signs in: the caller and the passkey used.
    async fn sign_in_with(&self, passkey: &mut SoftPasskey, how: &Answer) -> app::error::AppResult<(Caller, i64)> {
        let ceremony = self.begin_sign_in().await;
        let answer = passkey.get(&ceremony.options, how);
        passkeys::finish_sign_in(&self.db, &self.access, &self.rp, self.now(), client(), &ceremony.token, &answer).await
    }

    /// Adds `passkey`, named `name`, to the caller's account.
    async fn add(&self, caller: Caller, passkey: &mut SoftPasskey, name: &str) {
        let ceremony = passkeys::begin_adding(&self.db, &self.rp, self.now(), caller).await.unwrap();
        let answer = passkey.create(&ceremony.options, &honest());
        passkeys::finish_adding(&self.db, &self.rp, self.now(), caller, &ceremony.token, &answer, name).await.unwrap();
    }

    /// The caller's passkeys, by name.
    async fn passkey_names(&self, caller: Caller) -> Vec<String> {
        let account = passkeys::account(&self.db, caller, None).await.unwrap();
        account.passkeys.into_iter().map(|passkey| passkey.name).collect()
    }
}

/// Every attempt comes from this address.
fn client() -> ClientAddr {
    ClientAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)))
}

fn refused_sign_in(result: app::error::AppResult<Caller>) -> app::error::AppError {
    let err = result.expect_err("the sign-in is refused");
    assert_eq!(err.code, ErrorCode::InvalidApiKey, "{err:?}");
    err
}

#[tokio::test]
async fn an_account_made_with_a_passkey_signs_in_with_it_as_its_own_free_key() {
    let store = Store::new().await;
    let mut passkey = SoftPasskey::new();
    let made = store.sign_up(&mut passkey).await;
    assert_eq!(made.caller.role, Role::Customer);
    let key = keys::get(&store.db, made.caller.key_id).await.unwrap();
    assert_eq!((key.role, key.plan), (Role::Customer, Plan::Free));
    assert_eq!(made.recovery_codes.len(), RECOVERY_CODES);

    // No user name: the passkey names its account.
    let signed_in = store.sign_in(&mut passkey, &honest()).await.unwrap();
    assert_eq!(signed_in.key_id, made.caller.key_id);
    // Again, with the signature counter moved on.
    assert_eq!(store.sign_in(&mut passkey, &honest()).await.unwrap().key_id, made.caller.key_id);

    let account = passkeys::account(&store.db, made.caller, None).await.unwrap();
    assert_eq!(account.passkeys.len(), 1);
    assert_eq!(account.passkeys[0].id, made.passkey_id);
    assert_eq!(account.passkeys[0].last_used_at, Some(app::services::clock::rfc3339(START)));
    assert_eq!(account.recovery_codes_left, i64::try_from(RECOVERY_CODES).unwrap());
    assert_eq!(account.key_start, keys::shown_start(&key.prefix));

    // Another account is another key.
    let other = store.sign_up(&mut SoftPasskey::new()).await;
    assert_ne!(other.caller.key_id, made.caller.key_id);
}

#[tokio::test]
async fn the_creation_options_ask_for_a_discoverable_passkey_with_user_verification() {
    let store = Store::new().await;
    let options: serde_json::Value = serde_json::from_str(&store.begin_sign_up().await.options).unwrap();
    let selection = &options["authenticatorSelection"];
    assert_eq!(selection["residentKey"], "required", "{options}");
    assert_eq!(selection["userVerification"], "required", "{options}");
    assert_eq!(options["rp"]["id"], "localhost");
    assert!(!options.to_string().contains("null"), "no null member, which the browser refuses: {options}");
    let request: serde_json::Value = serde_json::from_str(&store.begin_sign_in().await.options).unwrap();
    assert_eq!(request["rpId"], "localhost");
    assert_eq!(request["userVerification"], "required");
    assert!(!request.to_string().contains("null"), "{request}");
}

#[tokio::test]
async fn each_challenge_is_answered_once() {
    let store = Store::new().await;
    let mut passkey = SoftPasskey::new();
    let ceremony = store.begin_sign_up().await;
    let answer = passkey.create(&ceremony.options, &honest());
    store.finish_sign_up(&ceremony, &answer).await.unwrap();
    let again = store.finish_sign_up(&ceremony, &answer).await.expect_err("a second answer is refused");
    assert_eq!(again.code, ErrorCode::ValidationFailed, "{again:?}");
    assert_eq!(keys::count(&store.db).await.unwrap(), 1, "one account, one key");

    let ceremony = store.begin_sign_in().await;
    let answer = passkey.get(&ceremony.options, &honest());
    store.finish_sign_in(&ceremony, &answer).await.unwrap();
    refused_sign_in(store.finish_sign_in(&ceremony, &answer).await);
}

#[tokio::test]
async fn a_ceremony_expires_after_five_minutes() {
    let store = Store::new().await;
    let mut passkey = SoftPasskey::new();
    let ceremony = store.begin_sign_up().await;
    let answer = passkey.create(&ceremony.options, &honest());
    store.now.fetch_add(CEREMONY_SECONDS, Ordering::Relaxed);
    let late = store.finish_sign_up(&ceremony, &answer).await.expect_err("too late");
    assert_eq!(late.code, ErrorCode::ValidationFailed);

    store.sign_up(&mut passkey).await;
    let ceremony = store.begin_sign_in().await;
    let answer = passkey.get(&ceremony.options, &honest());
    store.now.fetch_add(CEREMONY_SECONDS, Ordering::Relaxed);
    refused_sign_in(store.finish_sign_in(&ceremony, &answer).await);
    // In time, it works.
    store.sign_in(&mut passkey, &honest()).await.unwrap();
}

#[tokio::test]
async fn answers_for_another_origin_or_relying_party_are_refused() {
    let store = Store::new().await;
    for wrong in [
        Answer { origin: "http://localhost:3001".into(), ..honest() },
        Answer { origin: "https://evil.example".into(), ..honest() },
        Answer { rp_id: Some("evil.example".into()), ..honest() },
    ] {
        let ceremony = store.begin_sign_up().await;
        let answer = SoftPasskey::new().create(&ceremony.options, &wrong);
        let err = store.finish_sign_up(&ceremony, &answer).await.expect_err("refused");
        assert_eq!(err.code, ErrorCode::ValidationFailed, "{wrong:?}: {err:?}");
    }
    assert_eq!(keys::count(&store.db).await.unwrap(), 0, "no account was made");

    let mut passkey = SoftPasskey::new();
    store.sign_up(&mut passkey).await;
    refused_sign_in(store.sign_in(&mut passkey, &Answer { origin: "https://evil.example".into(), ..honest() }).await);
    refused_sign_in(store.sign_in(&mut passkey, &Answer { rp_id: Some("evil.example".into()), ..honest() }).await);
    // A signature over another challenge than the one asked.
    refused_sign_in(store.sign_in(&mut passkey, &Answer { challenge: Some(vec![7; 32]), ..honest() }).await);
    // Without user verification (a tap, no PIN or face).
    refused_sign_in(store.sign_in(&mut passkey, &Answer { verified: false, ..honest() }).await);
    store.sign_in(&mut passkey, &honest()).await.unwrap();
}

#[tokio::test]
async fn an_unknown_passkey_is_refused_in_the_same_words_as_a_wrong_signature() {
    let store = Store::new().await;
    let mut known = SoftPasskey::new();
    store.sign_up(&mut known).await;
    let unknown = refused_sign_in(store.sign_in(&mut SoftPasskey::new(), &honest()).await);
    let forged = refused_sign_in(store.sign_in(&mut known, &Answer { forged: true, ..honest() }).await);
    assert_eq!(unknown.message, forged.message);
}

#[tokio::test]
async fn a_revoked_key_cannot_sign_in_with_its_passkey() {
    let store = Store::new().await;
    let mut passkey = SoftPasskey::new();
    let made = store.sign_up(&mut passkey).await;
    keys::revoke(&store.db, store.now(), made.caller.key_id).await.unwrap();
    refused_sign_in(store.sign_in(&mut passkey, &honest()).await);
    let code = &made.recovery_codes[0];
    let err = passkeys::recover(&store.db, &store.access, store.now(), client(), code).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidApiKey);
}

#[tokio::test]
async fn each_recovery_code_signs_in_once_however_it_is_typed() {
    let store = Store::new().await;
    let made = store.sign_up(&mut SoftPasskey::new()).await;
    let codes = &made.recovery_codes;
    let distinct: std::collections::HashSet<_> = codes.iter().collect();
    assert_eq!(distinct.len(), RECOVERY_CODES);
    let recover = |code: String| {
        let store = &store;
        async move { passkeys::recover(&store.db, &store.access, store.now(), client(), &code).await }
    };
    let typed = format!("  {}  ", codes[3].to_uppercase().replace('-', " "));
    assert_eq!(recover(typed).await.unwrap().key_id, made.caller.key_id);
    let again = recover(codes[3].clone()).await.expect_err("a code works once");
    assert_eq!(again.code, ErrorCode::InvalidApiKey);
    assert_eq!(recover(codes[4].clone()).await.unwrap().key_id, made.caller.key_id);
    // Only hashes are stored.
    let stored: Vec<Vec<u8>> =
        app::on_pool!(store.db, |pool| sqlx::query_scalar("SELECT code_hash FROM recovery_codes")
            .fetch_all(pool)
            .await)
        .unwrap();
    assert_eq!(stored.len(), RECOVERY_CODES);
    assert!(stored.iter().all(|hash| hash.len() == 32 && !codes.iter().any(|code| hash == code.as_bytes())));
}

#[tokio::test]
async fn a_recovery_code_is_kept_while_its_key_is_over_its_limits() {
    let store = Store::new().await;
    let made = store.sign_up(&mut SoftPasskey::new()).await;
    // The key's minute spent (a Free key: 60 requests).
    for _ in 0..keys::free_limits().per_minute {
        store.access.sign_in_as(made.caller).await.unwrap();
    }
    let code = &made.recovery_codes[0];
    let err = passkeys::recover(&store.db, &store.access, store.now(), client(), code).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::RateLimited);
    store.now.fetch_add(60, Ordering::Relaxed);
    let caller = passkeys::recover(&store.db, &store.access, store.now(), client(), code).await.unwrap();
    assert_eq!(caller.key_id, made.caller.key_id, "the code was not spent by the refusal");
}

#[tokio::test]
async fn failed_sign_ins_with_passkeys_and_codes_are_throttled_like_wrong_keys() {
    let store = Store::new().await;
    let mut passkey = SoftPasskey::new();
    store.sign_up(&mut passkey).await;
    let limit = keys::free_limits().per_minute;
    let mut refusals = Vec::new();
    for attempt in 0..=limit {
        let err = if attempt % 2 == 0 {
            passkeys::recover(&store.db, &store.access, store.now(), client(), "nope-nope-nope").await.unwrap_err()
        } else {
            store.sign_in(&mut SoftPasskey::new(), &honest()).await.unwrap_err()
        };
        refusals.push(err.code);
    }
    assert!(
        refusals[..usize::try_from(limit).unwrap()].iter().all(|code| *code == ErrorCode::InvalidApiKey),
        "{refusals:?}"
    );
    assert_eq!(refusals.last(), Some(&ErrorCode::RateLimited), "over the limit of failed attempts");
    // As with keys, the right passkey is its key's request, not a failed attempt.
    store.sign_in(&mut passkey, &honest()).await.unwrap();
}

#[tokio::test]
async fn a_second_passkey_signs_in_to_the_same_account_and_a_key_without_one_gets_one() {
    let store = Store::new().await;
    let mut phone = SoftPasskey::new();
    let made = store.sign_up(&mut phone).await;
    let mut laptop = SoftPasskey::new();
    let ceremony = passkeys::begin_adding(&store.db, &store.rp, store.now(), made.caller).await.unwrap();
    let options: serde_json::Value = serde_json::from_str(&ceremony.options).unwrap();
    assert_eq!(options["excludeCredentials"].as_array().map(Vec::len), Some(1), "the phone's is excluded");
    let answer = laptop.create(&ceremony.options, &honest());
    passkeys::finish_adding(&store.db, &store.rp, store.now(), made.caller, &ceremony.token, &answer, "Laptop")
        .await
        .unwrap();
    let names = store.passkey_names(made.caller).await;
    assert_eq!(names.len(), 2);
    assert_eq!(names[1], "Laptop");
    assert_eq!(store.sign_in(&mut laptop, &honest()).await.unwrap().key_id, made.caller.key_id);
    assert_eq!(store.sign_in(&mut phone, &honest()).await.unwrap().key_id, made.caller.key_id);

    // An admin key (made without an account) gets one with its first passkey.
    let admin = NewApiKey { name: "staff".into(), role: Role::Admin, plan: Plan::Pro, limits: None };
    let admin = keys::create(&store.db, store.now(), admin).await.unwrap().key_info;
    let caller = Caller { key_id: admin.id, role: Role::Admin, limits: admin.limits };
    let mut desk = SoftPasskey::new();
    let ceremony = passkeys::begin_adding(&store.db, &store.rp, store.now(), caller).await.unwrap();
    let answer = desk.create(&ceremony.options, &honest());
    // Another caller cannot finish it.
    let err = passkeys::finish_adding(&store.db, &store.rp, store.now(), made.caller, &ceremony.token, &answer, "Desk")
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::ValidationFailed);
    let ceremony = passkeys::begin_adding(&store.db, &store.rp, store.now(), caller).await.unwrap();
    let answer = desk.create(&ceremony.options, &honest());
    passkeys::finish_adding(&store.db, &store.rp, store.now(), caller, &ceremony.token, &answer, "Desk").await.unwrap();
    let signed_in = store.sign_in(&mut desk, &honest()).await.unwrap();
    assert_eq!((signed_in.key_id, signed_in.role), (admin.id, Role::Admin));
}

#[tokio::test]
async fn removing_a_passkey_ends_the_sessions_it_opened_and_it_signs_in_no_more() {
    let store = Store::new().await;
    let mut phone = SoftPasskey::new();
    let made = store.sign_up(&mut phone).await;
    let mut laptop = SoftPasskey::new();
    store.add(made.caller, &mut laptop, "Laptop").await;
    let (_, phone_id) = store.sign_in_with(&mut phone, &honest()).await.unwrap();
    assert_eq!(phone_id, made.passkey_id);
    let (_, laptop_id) = store.sign_in_with(&mut laptop, &honest()).await.unwrap();
    let key_id = made.caller.key_id;
    let start = |opened| sessions::start(&store.db, store.now(), key_id, opened, None);
    let on_phone = start(Opened::Passkey(phone_id)).await.unwrap();
    let also_on_phone = start(Opened::Passkey(phone_id)).await.unwrap();
    let on_laptop = start(Opened::Passkey(laptop_id)).await.unwrap();
    let by_code = start(Opened::Code).await.unwrap();
    let opening = sessions::opening(&store.db, &on_phone).await.unwrap();
    assert_eq!(opening, Some(sessions::Opening { by_key: false, passkey: Some(phone_id) }));
    let this_browser = passkeys::account(&store.db, made.caller, opening).await.unwrap();
    assert_eq!(this_browser.passkeys.iter().map(|p| p.this_browser).collect::<Vec<_>>(), [true, false]);

    let removed = passkeys::remove(&store.db, made.caller, phone_id).await.unwrap();
    assert_eq!(removed.sessions_ended, 2);
    let live = |token: String| {
        let store = &store;
        async move { sessions::caller(&store.db, store.now(), &token).await.unwrap().is_some() }
    };
    assert!(!live(on_phone).await && !live(also_on_phone).await, "the phone's sessions ended");
    assert!(live(on_laptop).await && live(by_code).await, "the others stay");
    // A sign-in with it that checked just before the removal opens no session after it.
    let late = start(Opened::Passkey(phone_id)).await.unwrap_err();
    assert_eq!(late.code, ErrorCode::InvalidApiKey);
    refused_sign_in(store.sign_in(&mut phone, &honest()).await);
    assert_eq!(store.sign_in(&mut laptop, &honest()).await.unwrap().key_id, key_id);
    assert_eq!(store.passkey_names(made.caller).await, ["Laptop"]);
    // Gone: removing it again, or another account's passkey, finds nothing.
    let again = passkeys::remove(&store.db, made.caller, phone_id).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::NotFound);
    let other = store.sign_up(&mut SoftPasskey::new()).await;
    let theirs = passkeys::remove(&store.db, made.caller, other.passkey_id).await.unwrap_err();
    assert_eq!(theirs.code, ErrorCode::NotFound);
    assert_eq!(store.passkey_names(other.caller).await.len(), 1);
}

#[tokio::test]
async fn the_last_passkey_goes_only_while_a_recovery_code_is_left() {
    let store = Store::new().await;
    // With its codes, an account may remove its only passkey: a code signs it in.
    let made = store.sign_up(&mut SoftPasskey::new()).await;
    passkeys::remove(&store.db, made.caller, made.passkey_id).await.unwrap();
    let code = &made.recovery_codes[0];
    passkeys::recover(&store.db, &store.access, store.now(), client(), code).await.unwrap();

    // With every code spent, the last passkey stays.
    let mut phone = SoftPasskey::new();
    let spent = store.sign_up(&mut phone).await;
    for code in &spent.recovery_codes {
        passkeys::recover(&store.db, &store.access, store.now(), client(), code).await.unwrap();
    }
    let mut laptop = SoftPasskey::new();
    store.add(spent.caller, &mut laptop, "Laptop").await;
    passkeys::remove(&store.db, spent.caller, spent.passkey_id).await.unwrap();
    let (_, laptop_id) = store.sign_in_with(&mut laptop, &honest()).await.unwrap();
    let err = passkeys::remove(&store.db, spent.caller, laptop_id).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ValidationFailed, "{err:?}");
    assert!(err.message.contains("last passkey"), "{}", err.message);
    assert_eq!(store.passkey_names(spent.caller).await, ["Laptop"]);
    let account = passkeys::account(&store.db, spent.caller, None).await.unwrap();
    assert_eq!(account.recovery_codes_left, 0);
    assert!(!account.passkeys[0].removable, "the page offers no Remove for it");
}

#[tokio::test]
async fn a_new_secret_replaces_the_old_one_and_ends_the_sessions_no_passkey_opened() {
    use app::services::auth::Presented;
    let store = Store::new().await;
    let made = store.sign_up(&mut SoftPasskey::new()).await;
    let key_id = made.caller.key_id;
    let auth = &store.access.auth;
    // The account's secret was never shown: a first new one makes it known.
    let first = auth.new_secret(key_id, None).await.unwrap();
    assert_eq!(auth.authenticate(Presented::Key(&first)).await.unwrap().unwrap().key_id, key_id);
    let start = |opened| sessions::start(&store.db, store.now(), key_id, opened, None);
    let mine = start(Opened::Code).await.unwrap();
    let by_key = start(Opened::Key(&first)).await.unwrap();
    let by_passkey = start(Opened::Passkey(made.passkey_id)).await.unwrap();

    let renewed = auth.new_secret(key_id, Some(&mine)).await.unwrap();
    assert_ne!(renewed, first);
    let old = auth.authenticate(Presented::Key(&first)).await.unwrap_err();
    assert_eq!(old.code, ErrorCode::InvalidApiKey, "the old secret stops working at once");
    assert_eq!(auth.authenticate(Presented::Key(&renewed)).await.unwrap().unwrap().key_id, key_id, "same key");
    let live = |token: String| {
        let store = &store;
        async move { sessions::caller(&store.db, store.now(), &token).await.unwrap().is_some() }
    };
    assert!(live(mine).await, "the owner's own session stays");
    assert!(!live(by_key).await, "a session the old secret opened ends");
    assert!(live(by_passkey).await, "a passkey's session stays");
    // A sign-in with the old secret that checked just before opens no session after.
    assert_eq!(start(Opened::Key(&first)).await.unwrap_err().code, ErrorCode::InvalidApiKey);
    start(Opened::Key(&renewed)).await.unwrap();
    let row = keys::get(&store.db, key_id).await.unwrap();
    assert!(renewed.starts_with(&keys::shown_start(&row.prefix)));
}

#[tokio::test]
async fn a_session_the_key_opened_cannot_change_an_account_that_has_a_passkey() {
    let store = Store::new().await;
    let made = store.sign_up(&mut SoftPasskey::new()).await;
    let err = passkeys::may_change(&store.db, made.caller, true).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Forbidden, "a leaked key cannot lock the owner out");
    passkeys::may_change(&store.db, made.caller, false).await.unwrap();
    let key_session = sessions::Opening { by_key: true, passkey: None };
    let account = passkeys::account(&store.db, made.caller, Some(key_session)).await.unwrap();
    assert!(account.locked);
    // A key without a passkey has only its key to prove who owns it.
    let new = NewApiKey { name: "developer".into(), role: Role::Customer, plan: Plan::Free, limits: None };
    let developer = keys::create(&store.db, store.now(), new).await.unwrap().key_info;
    let caller = Caller { key_id: developer.id, role: Role::Customer, limits: developer.limits };
    passkeys::may_change(&store.db, caller, true).await.unwrap();
    assert!(!passkeys::account(&store.db, caller, Some(key_session)).await.unwrap().locked);
}

#[tokio::test]
async fn a_staff_sign_in_link_signs_in_once_within_a_day_and_is_not_one_of_the_codes() {
    let store = Store::new().await;
    let made = store.sign_up(&mut SoftPasskey::new()).await;
    let key_id = made.caller.key_id;
    let issue = || passkeys::issue_sign_in_link(&store.db, &store.rp, store.now(), key_id);
    let code_of = |link: String| {
        let code =
            link.strip_prefix("http://localhost:3000/sign-in?code=").expect("on the passkeys' origin").to_owned();
        assert_eq!(code.len(), 24, "twenty letters in groups of four: {code}");
        code
    };
    let recover = |code: String| {
        let store = &store;
        async move { passkeys::recover(&store.db, &store.access, store.now(), client(), &code).await }
    };
    let code = code_of(issue().await.unwrap());
    assert_eq!(recover(code.clone()).await.unwrap().key_id, key_id);
    assert_eq!(recover(code).await.unwrap_err().code, ErrorCode::InvalidApiKey, "once");
    // Not one of the account's own codes: the count (and the last passkey's rule) skip it.
    let account = passkeys::account(&store.db, made.caller, None).await.unwrap();
    assert_eq!(account.recovery_codes_left, i64::try_from(RECOVERY_CODES).unwrap());

    // A day later it no longer works.
    let late = code_of(issue().await.unwrap());
    store.now.fetch_add(passkeys::LINK_SECONDS, Ordering::Relaxed);
    assert_eq!(recover(late).await.unwrap_err().code, ErrorCode::InvalidApiKey, "expired");
    // The account's own codes still do.
    assert_eq!(recover(made.recovery_codes[0].clone()).await.unwrap().key_id, key_id);

    // A key without an account gets one (the link then leads to adding a passkey); a
    // revoked key none.
    let new = NewApiKey { name: "developer".into(), role: Role::Customer, plan: Plan::Free, limits: None };
    let developer = keys::create(&store.db, store.now(), new).await.unwrap().key_info.id;
    let link = passkeys::issue_sign_in_link(&store.db, &store.rp, store.now(), developer).await.unwrap();
    assert_eq!(recover(code_of(link)).await.unwrap().key_id, developer);
    keys::revoke(&store.db, store.now(), developer).await.unwrap();
    let err = passkeys::issue_sign_in_link(&store.db, &store.rp, store.now(), developer).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ValidationFailed);
}

#[path = "support/soft_passkey.rs"]
mod authenticator;
