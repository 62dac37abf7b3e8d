// The dashboard (`/admin` opened by a page load) works before its client: the server renders it
// with its data, its links and "Details" are plain HTML. The client (the main module and the
// admin pages' module, about 1 MB brotli) comes on the admin's first pointer, touch, key, focus
// or wheel, as the home page's does (`hydrate_on_first_use.js`), or as soon as an inquiry, a
// share or a setting changes. Until then this script:
// - follows the live stream (`/admin/live`): it keeps `data-live` on the root element as the
//   client does ("on", "reconnecting"), and a change (or a reconnection, after which anything
//   may have changed) starts the client, but for a job's run, which waits for the first use;
//   the client's own stream takes over once it is open
//   (`window.__ebbLiveHandoff`, called by `common::live`), and fetches everything again if this
//   stream heard of a change, so nothing that happened before the client is missed;
// - holds a button pressed in the admin frame (Run now, Mark resolved, Sign out) until the page
//   has hydrated, then presses it again: the press does what it does on a hydrated page. If the
//   client cannot load, a held submit button submits its form as plain HTML (sign-out works so).
// While the client loads, the root element carries `data-client="loading"` (a progress cursor).
// Arguments: the URLs of the client's JS glue and of its wasm, and `[live stream path]`.
(function (js, wasm, more) {
	const root = document.documentElement;
	const kinds = ["pointerdown", "pointermove", "touchstart", "keydown", "focusin", "wheel"];
	const opts = { capture: true, passive: true };
	const admin = () => document.querySelector(".admin");
	const isHydrated = () => !admin() || admin().getAttribute("data-hydrated") === "true";
	let started = false;
	let held = null;
	const release = (native) => {
		root.removeAttribute("data-client");
		let button = held;
		held = null;
		// Hydration keeps the page's elements; should one be replaced, its namesake is pressed.
		if (button && !button.isConnected && button.dataset.testid) {
			button = document.querySelector(`[data-testid="${CSS.escape(button.dataset.testid)}"]`);
		}
		if (!button || !button.isConnected) return;
		if (!native) button.click();
		else if (button.type === "submit" && button.form) button.form.requestSubmit(button);
	};
	const start = () => {
		if (started) return;
		started = true;
		for (const k of kinds) window.removeEventListener(k, start, opts);
		root.setAttribute("data-client", "loading");
		import(js)
			.then((mod) => mod.default({ module_or_path: wasm }).then(() => mod.hydrate()))
			.catch(() => release(true));
	};
	for (const k of kinds) window.addEventListener(k, start, opts);
	if (document.activeElement && document.activeElement !== document.body) start();

	// Hydrated: the admin frame marks itself (`data-hydrated`); a held press is pressed again once
	// the page's handlers are in place (the next task).
	new MutationObserver((_, observer) => {
		if (!isHydrated()) return;
		observer.disconnect();
		setTimeout(() => release(false), 0);
	}).observe(document.body, { attributes: true, attributeFilter: ["data-hydrated"], childList: true, subtree: true });
	document.addEventListener(
		"click",
		(ev) => {
			if (isHydrated()) return;
			const button = ev.target instanceof Element ? ev.target.closest("button") : null;
			if (!button || !admin().contains(button) || button.disabled) return;
			// Held (the first press only: a second one before the client does nothing more).
			ev.preventDefault();
			ev.stopImmediatePropagation();
			if (!held) held = button;
			start();
		},
		true,
	);

	// The live stream until the client's is open.
	let heard = false;
	let source = null;
	try {
		source = new EventSource(more[0]);
	} catch (_) {
		source = null;
	}
	if (source) {
		let connected = false;
		const changed = () => {
			heard = true;
			start();
		};
		source.addEventListener("ready", () => {
			if (connected) changed();
			connected = true;
			root.setAttribute("data-live", "on");
		});
		for (const topic of ["inquiry", "share", "settings", "resync"]) source.addEventListener(topic, changed);
		// A job's run alone (the 1-minute jobs run after responses and on the ticker: nearly every
		// opening of the dashboard sets one off) waits for the admin's first use, when the client
		// fetches everything again; what a run removes comes by its own topic (inquiry, share).
		source.addEventListener("job", () => {
			heard = true;
		});
		source.onerror = () => root.setAttribute("data-live", "reconnecting");
	}
	// Called once by the client when its own stream is open: this one closes, and the answer says
	// whether the page must fetch its data again.
	window.__ebbLiveHandoff = () => {
		if (source) source.close();
		source = null;
		window.__ebbLiveHandoff = undefined;
		return heard;
	};
})
