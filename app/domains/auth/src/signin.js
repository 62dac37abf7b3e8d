// The sign-in page's whole client: the passkey ceremony against the server functions
// `auth/signin/start` and `auth/signin/finish`, on the server-rendered page (no wasm). Its texts,
// in the page's language, and the page to go to afterwards are in the card's data attributes
// (`auth::ui::SignInPage`). It fetches nothing of the app's client: the dashboard the admin lands
// on works before its client and gets it on first use (`app/src/dashboard_on_first_use.js`), so
// signing in and seeing the dashboard costs no wasm at all (issue 36: at most 150 KB to an
// interactive dashboard; the whole admin client is about 1 MB brotli).
// Called, as every inline client script is, with the URLs of the client's JS glue and main wasm
// module, which it does not use.
(function () {
	const card = document.querySelector("[data-signin]");
	if (!card) return;
	const texts = JSON.parse(card.dataset.texts);
	const next = card.dataset.next;
	const button = card.querySelector("[data-testid=signin]");
	const error = card.querySelector("[data-testid=signin-error]");
	const field = card.querySelector("[data-autofill]");
	if (!window.PublicKeyCredential || !navigator.credentials) {
		show(texts.NotSupportedError);
		return;
	}

	// base64url (no padding), as webauthn-rs reads and writes binary fields.
	const bytes = (b64) => Uint8Array.from(atob(b64.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
	const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

	function show(message) {
		error.textContent = message;
		error.hidden = !message;
	}
	function setBusy(busy) {
		button.disabled = busy;
		button.setAttribute("aria-busy", String(busy));
		button.textContent = busy ? texts.busy : texts.idle;
	}
	// What the server's error (an `AppError` as JSON) says to the person.
	function describe(body) {
		if (typeof body === "string") return texts.errors[body] || texts.errors.Internal;
		const [kind, value] = Object.entries(body || {})[0] || [];
		if (kind === "BadRequest" || kind === "Conflict") return value;
		if (kind === "Invalid") return Object.values(value).join(" ");
		if (kind === "RateLimited") return texts.errors.RateLimited.replace("{n}", Math.ceil(value.retry_after_secs / 60));
		return texts.errors[kind] || texts.errors.Internal;
	}
	class Refused extends Error {}
	async function call(endpoint, type, body) {
		let response;
		try {
			response = await fetch("/api/auth/signin/" + endpoint, {
				method: "POST",
				headers: { "content-type": type, accept: "application/json" },
				body,
			});
		} catch {
			throw new Refused(texts.errors.Internal);
		}
		const json = await response.json().catch(() => null);
		if (!response.ok) throw new Refused(describe(json));
		return json;
	}
	// A WebAuthn DOMException, in words a person can act on.
	const explain = (e) => (e instanceof Refused ? e.message : texts[e && e.name] || texts.failed);

	// The options as the browser takes them: the binary fields as bytes.
	function options(rcr, signal) {
		const publicKey = { ...rcr.publicKey, challenge: bytes(rcr.publicKey.challenge) };
		publicKey.allowCredentials = (publicKey.allowCredentials || []).map((c) => ({ ...c, id: bytes(c.id) }));
		const opts = { publicKey };
		if (rcr.mediation) opts.mediation = rcr.mediation;
		if (signal) opts.signal = signal;
		return opts;
	}
	async function finish(challenge, credential) {
		const r = credential.response;
		await call(
			"finish",
			"application/json",
			JSON.stringify({
				challenge,
				credential: {
					id: credential.id,
					rawId: b64(credential.rawId),
					response: {
						authenticatorData: b64(r.authenticatorData),
						clientDataJSON: b64(r.clientDataJSON),
						signature: b64(r.signature),
						userHandle: r.userHandle ? b64(r.userHandle) : null,
					},
					type: credential.type,
				},
			}),
		);
		window.location.href = next;
	}

	// The pending autofill (conditional) request, aborted when the button is used.
	let pending = null;
	async function offerAutofill() {
		if (!(await PublicKeyCredential.isConditionalMediationAvailable?.())) return;
		const [challenge, rcr] = await call("start", "application/x-www-form-urlencoded", "conditional=true");
		const controller = new AbortController();
		const promise = navigator.credentials.get(options(rcr, controller.signal));
		pending = { controller, promise };
		field.hidden = false;
		// Resolves when a passkey is picked from the autofill list; rejects when the button's
		// dialog replaces it.
		const credential = await promise.catch(() => null);
		if (!credential || pending?.promise !== promise) return;
		pending = null;
		setBusy(true);
		try {
			await finish(challenge, credential);
		} catch (e) {
			show(explain(e));
			setBusy(false);
		}
	}

	async function signIn() {
		setBusy(true);
		show("");
		if (pending) {
			const { controller, promise } = pending;
			pending = null;
			controller.abort();
			await promise.catch(() => null);
		}
		try {
			const [challenge, rcr] = await call("start", "application/x-www-form-urlencoded", "");
			const credential = await navigator.credentials.get(options(rcr));
			await finish(challenge, credential);
		} catch (e) {
			show(explain(e));
			setBusy(false);
		}
	}

	button.addEventListener("click", signIn);
	setBusy(false);
	offerAutofill().catch(() => {});
})
