//! "Help" (`/help`): what a shopper needs to know about accounts, passkeys, recovery
//! codes and orders, and where developers find their key. Static: the same page for
//! everyone, kept by the page cache like the catalog.

use leptos::prelude::*;

use super::widgets::PageTitle;

#[component]
pub fn HelpPage() -> impl IntoView {
    view! {
        <PageTitle text="Help"/>
        <article class="panel help">
            <h1>"Help"</h1>
            <h2 id="accounts">"Your account and passkeys"</h2>
            <p>
                "You sign in with a " <strong>"passkey"</strong> ": your phone's or computer's screen lock (a "
                "fingerprint, your face or a PIN). There is no password to remember and the store asks for no email. "
                <a href="/sign-up">"Create an account"</a> " and your browser asks for your screen lock once."
            </p>
            <ul>
                <li>"To sign in, choose " <em>"Continue with a passkey"</em> " on " <a href="/sign-in">"Sign in"</a>
                    ". You type no name: your device knows which account the passkey is for. Most browsers also "
                    "offer the passkey when you tap the " <em>"Account"</em> " field there: pick it, and you are in."</li>
                <li>"On another device, your browser may offer to use the passkey on your phone. Or sign in there "
                    "with a recovery code, then add a passkey for that device on " <a href="/account">"your account page"</a> "."</li>
                <li>"Your account page lists your passkeys, when each was last used, and lets you remove one you no "
                    "longer have: the browsers it signed in are signed out."</li>
            </ul>
            <h2 id="recovery-codes">"Recovery codes"</h2>
            <p>
                "When you create your account you are shown ten recovery codes, once. Keep them somewhere safe "
                "(printed, or in a password manager). If you lose your passkey, choose "
                <em>"Lost your passkey? Use a recovery code"</em> " on the sign-in page: each code signs you in once, "
                "and the store then offers to add a passkey for the device you are on. Your account page says how many "
                "codes are left. The store keeps only a fingerprint (a hash) of each code, so it cannot tell you them again."
            </p>
            <h2 id="orders">"Ordering"</h2>
            <p>
                "Signed in, order from a pet's page: choose how many and press Order. A double click places one "
                "order. " <a href="/orders">"My orders"</a> " lists them, and an open order can be cancelled there."
            </p>
            <h2 id="developers">"For developers: your API key"</h2>
            <p>
                "Everything your account does belongs to its API key, which programs send as "
                <code>"X-API-Key"</code> " to the REST API at " <code>"/api/v1"</code> ". Find it under "
                <a href="/account">"your account"</a> ", API key: the store keeps only a hash of a key, so it shows the "
                "key's beginning and makes you a new one on request (shown once; the old one stops working). "
                "A developer without an account can get a free key on " <a href="/sign-up">"Sign up"</a>
                " instead. " <a href="/docs">"The API documentation"</a> " has every operation, with a try-it panel."
            </p>
        </article>
    }
}
