//! The browser half of the passkey registrations and of the step-up (hydrated client only;
//! sign-in's is `signin.js`).

use super::AuthT;
use common::i18n::t;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use webauthn_rs_proto::{CreationChallengeResponse, PublicKeyCredential, RegisterPublicKeyCredential, RequestChallengeResponse};

/// A message a person can act on, from a WebAuthn DOMException.
fn explain(err: wasm_bindgen::JsValue) -> String {
    let name = err.dyn_ref::<js_sys::Error>().map(|e| String::from(e.name())).unwrap_or_default();
    let key = match name.as_str() {
        "NotAllowedError" => AuthT::PromptClosed,
        "InvalidStateError" => AuthT::AlreadyRegistered,
        "SecurityError" => AuthT::WrongAddress,
        "NotSupportedError" => AuthT::NoPasskeySupport,
        _ => AuthT::PasskeyFailed,
    };
    t(key).into()
}

fn credentials() -> Result<web_sys::CredentialsContainer, String> {
    web_sys::window().map(|w| w.navigator().credentials()).ok_or_else(|| t(AuthT::NeedsWindow).to_string())
}

/// Asks the authenticator for an assertion with one of the admin's passkeys (a step-up).
pub async fn get_passkey(rcr: RequestChallengeResponse) -> Result<PublicKeyCredential, String> {
    let options: web_sys::CredentialRequestOptions = rcr.into();
    let promise = credentials()?.get_with_options(&options).map_err(explain)?;
    let credential = JsFuture::from(promise).await.map_err(explain)?;
    Ok(PublicKeyCredential::from(web_sys::PublicKeyCredential::from(credential)))
}

/// Asks the authenticator to create a passkey.
pub async fn create_passkey(ccr: CreationChallengeResponse) -> Result<RegisterPublicKeyCredential, String> {
    let options: web_sys::CredentialCreationOptions = ccr.into();
    let promise = credentials()?.create_with_options(&options).map_err(explain)?;
    let credential = JsFuture::from(promise).await.map_err(explain)?;
    Ok(RegisterPublicKeyCredential::from(web_sys::PublicKeyCredential::from(credential)))
}
