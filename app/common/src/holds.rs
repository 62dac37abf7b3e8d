//! Legal holds as every deleting domain sees them: what a hold can cover, and the form that
//! places one. The form is the holds domain's; the composition root provides it to the pages
//! ([`HoldFormSlot`]) so that the inbox and the shares pages offer it without depending on holds.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a new hold covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HoldTarget {
    /// One inquiry.
    Inquiry(Uuid),
    /// Every inquiry from the email address of this inquiry: those stored now and those that
    /// arrive while the hold lasts.
    Sender(Uuid),
    /// An active share (its file is kept until the hold is lifted).
    Share(i64),
}

/// The hold form, as the composition root provides it: `(id, choices, on_placed)` → the form.
/// `id` makes the field's id unique on the page; each choice is a button `(label, target)`.
#[derive(Clone, Copy)]
pub struct HoldFormSlot(pub HoldFormFn);

/// What renders the hold form: `(id, choices, on_placed)` → the form.
pub type HoldFormFn = fn(String, Vec<(&'static str, HoldTarget)>, Callback<()>) -> AnyView;

/// The hold form of the page's context (nothing when the root provides none, e.g. in a test).
pub fn hold_form(id: String, choices: Vec<(&'static str, HoldTarget)>, on_placed: Callback<()>) -> Option<AnyView> {
    use_context::<HoldFormSlot>().map(|slot| (slot.0)(id, choices, on_placed))
}
