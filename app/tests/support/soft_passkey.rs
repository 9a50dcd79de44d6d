//! A software authenticator for the passkey tests (app/tests/passkeys.rs, and the
//! several-servers suite's, which includes this file by its path): what a browser and a
//! platform authenticator would answer to the store's options, as the JSON
//! `PublicKeyCredential.toJSON()` gives, with a P-256 key and `none` attestation, or
//! wrong on purpose in one way.

#![allow(dead_code)]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use openssl::bn::BigNumContext;
use openssl::ec::{EcGroup, EcKey};
use openssl::ecdsa::EcdsaSig;
use openssl::nid::Nid;
use openssl::pkey::Private;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// How to answer: honestly, or wrong in one way.
#[derive(Clone, Debug)]
pub struct Answer {
    pub origin: String,
    /// Sign for another relying party than the options name.
    pub rp_id: Option<String>,
    /// Answer another challenge than the one asked.
    pub challenge: Option<Vec<u8>>,
    /// The user verified (PIN, face): the UV flag.
    pub verified: bool,
    /// A signature by another key.
    pub forged: bool,
}

impl Answer {
    /// As a browser at `origin` answers.
    pub fn honest_at(origin: &str) -> Answer {
        Answer { origin: origin.into(), rp_id: None, challenge: None, verified: true, forged: false }
    }
}

pub struct SoftPasskey {
    key: EcKey<Private>,
    credential_id: Vec<u8>,
    user_handle: Vec<u8>,
    counter: u32,
}

impl SoftPasskey {
    pub fn new() -> SoftPasskey {
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        let mut credential_id = vec![0; 16];
        openssl::rand::rand_bytes(&mut credential_id).unwrap();
        SoftPasskey { key: EcKey::generate(&group).unwrap(), credential_id, user_handle: Vec::new(), counter: 0 }
    }

    fn auth_data(&self, rp_id: &str, flags: u8) -> Vec<u8> {
        let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
        data.push(flags);
        data.extend_from_slice(&self.counter.to_be_bytes());
        data
    }

    fn client_data(kind: &str, challenge: &[u8], how: &Answer) -> Vec<u8> {
        let challenge = how.challenge.as_deref().unwrap_or(challenge);
        json!({ "type": kind, "challenge": B64.encode(challenge), "origin": how.origin, "crossOrigin": false })
            .to_string()
            .into_bytes()
    }

    /// The COSE form of the public key (EC2, ES256, P-256).
    fn cose_key(&self) -> Vec<u8> {
        let group = self.key.group();
        let (mut x, mut y) = (openssl::bn::BigNum::new().unwrap(), openssl::bn::BigNum::new().unwrap());
        let mut ctx = BigNumContext::new().unwrap();
        self.key.public_key().affine_coordinates(group, &mut x, &mut y, &mut ctx).unwrap();
        let mut cbor = vec![0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20];
        cbor.extend(x.to_vec_padded(32).unwrap());
        cbor.extend([0x22, 0x58, 0x20]);
        cbor.extend(y.to_vec_padded(32).unwrap());
        cbor
    }

    /// `navigator.credentials.create()` with these options.
    pub fn create(&mut self, options: &str, how: &Answer) -> String {
        let options: Value = serde_json::from_str(options).unwrap();
        let rp_id = how.rp_id.clone().unwrap_or_else(|| options["rp"]["id"].as_str().unwrap().to_owned());
        let challenge = B64.decode(options["challenge"].as_str().unwrap()).unwrap();
        self.user_handle = B64.decode(options["user"]["id"].as_str().unwrap()).unwrap();
        // UP, AT, and UV when verified.
        let mut auth_data = self.auth_data(&rp_id, 0x41 | if how.verified { 0x04 } else { 0 });
        auth_data.extend([0; 16]);
        auth_data.extend(u16::try_from(self.credential_id.len()).unwrap().to_be_bytes());
        auth_data.extend(&self.credential_id);
        auth_data.extend(self.cose_key());
        // {"fmt": "none", "attStmt": {}, "authData": bytes}
        let mut attestation = vec![0xa3, 0x63];
        attestation.extend(b"fmt");
        attestation.push(0x64);
        attestation.extend(b"none");
        attestation.push(0x67);
        attestation.extend(b"attStmt");
        attestation.push(0xa0);
        attestation.push(0x68);
        attestation.extend(b"authData");
        attestation.extend([0x59]);
        attestation.extend(u16::try_from(auth_data.len()).unwrap().to_be_bytes());
        attestation.extend(&auth_data);
        let client_data = Self::client_data("webauthn.create", &challenge, how);
        json!({
            "id": B64.encode(&self.credential_id),
            "rawId": B64.encode(&self.credential_id),
            "type": "public-key",
            "authenticatorAttachment": "platform",
            "response": {
                "attestationObject": B64.encode(&attestation),
                "clientDataJSON": B64.encode(&client_data),
                "transports": ["internal"],
            },
            "clientExtensionResults": {},
        })
        .to_string()
    }

    /// `navigator.credentials.get()` with these options.
    pub fn get(&mut self, options: &str, how: &Answer) -> String {
        let options: Value = serde_json::from_str(options).unwrap();
        let rp_id = how.rp_id.clone().unwrap_or_else(|| options["rpId"].as_str().unwrap().to_owned());
        let challenge = B64.decode(options["challenge"].as_str().unwrap()).unwrap();
        self.counter += 1;
        let auth_data = self.auth_data(&rp_id, 0x01 | if how.verified { 0x04 } else { 0 });
        let client_data = Self::client_data("webauthn.get", &challenge, how);
        let mut signed = auth_data.clone();
        signed.extend(Sha256::digest(&client_data));
        let digest = Sha256::digest(&signed);
        let signer = if how.forged { SoftPasskey::new().key } else { self.key.clone() };
        let signature = EcdsaSig::sign(&digest, &signer).unwrap().to_der().unwrap();
        // An authenticator that never made a passkey here still names some user.
        let user_handle = if self.user_handle.is_empty() { vec![9; 16] } else { self.user_handle.clone() };
        json!({
            "id": B64.encode(&self.credential_id),
            "rawId": B64.encode(&self.credential_id),
            "type": "public-key",
            "authenticatorAttachment": "platform",
            "response": {
                "authenticatorData": B64.encode(&auth_data),
                "clientDataJSON": B64.encode(&client_data),
                "signature": B64.encode(&signature),
                "userHandle": B64.encode(&user_handle),
            },
            "clientExtensionResults": {},
        })
        .to_string()
    }
}
