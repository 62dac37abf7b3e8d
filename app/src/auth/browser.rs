//! The browser half of the WebAuthn ceremonies (hydrated client only).

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use webauthn_rs_proto::{CreationChallengeResponse, PublicKeyCredential, RegisterPublicKeyCredential, RequestChallengeResponse};

/// A message a person can act on, from a WebAuthn DOMException.
fn explain(err: wasm_bindgen::JsValue) -> String {
    let name = err.dyn_ref::<js_sys::Error>().map(|e| String::from(e.name())).unwrap_or_default();
    match name.as_str() {
        "NotAllowedError" => "The passkey prompt was closed or timed out. Please try again.".into(),
        "InvalidStateError" => "This passkey is already registered for your account.".into(),
        "SecurityError" => "Passkeys cannot be used on this address. Open Ebb at its configured public URL.".into(),
        "NotSupportedError" => "This browser or device does not support passkeys.".into(),
        _ => "The passkey operation failed. Please try again.".into(),
    }
}

fn credentials() -> Result<web_sys::CredentialsContainer, String> {
    web_sys::window()
        .map(|w| w.navigator().credentials())
        .ok_or_else(|| "Passkeys need a browser window.".to_string())
}

/// Asks the authenticator to create a passkey.
pub async fn create_passkey(ccr: CreationChallengeResponse) -> Result<RegisterPublicKeyCredential, String> {
    let options: web_sys::CredentialCreationOptions = ccr.into();
    let promise = credentials()?.create_with_options(&options).map_err(explain)?;
    let credential = JsFuture::from(promise).await.map_err(explain)?;
    Ok(RegisterPublicKeyCredential::from(web_sys::PublicKeyCredential::from(credential)))
}

/// Asks the authenticator for an assertion with any passkey of this site.
pub async fn use_passkey(rcr: RequestChallengeResponse) -> Result<PublicKeyCredential, String> {
    let options: web_sys::CredentialRequestOptions = rcr.into();
    let promise = credentials()?.get_with_options(&options).map_err(explain)?;
    let credential = JsFuture::from(promise).await.map_err(explain)?;
    Ok(PublicKeyCredential::from(web_sys::PublicKeyCredential::from(credential)))
}
