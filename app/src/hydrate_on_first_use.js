// The home page's client is fetched when the visitor first uses the page, not with the page: the
// contact form, the language switch and the links work without it (they are plain HTML), so a
// visitor who only reads never downloads it, and one who types, points or taps gets it then.
// A field focused before this ran (module scripts run once the page is parsed) starts it at once.
// Arguments: the URLs of the client's JS glue and of its wasm.
(function (js, wasm) {
	const kinds = ["pointerdown", "pointermove", "touchstart", "keydown", "focusin", "wheel"];
	const opts = { capture: true, passive: true };
	let started = false;
	const start = () => {
		if (started) return;
		started = true;
		for (const k of kinds) window.removeEventListener(k, start, opts);
		import(js).then((mod) => mod.default({ module_or_path: wasm }).then(() => mod.hydrate()));
	};
	for (const k of kinds) window.addEventListener(k, start, opts);
	if (document.activeElement && document.activeElement !== document.body) start();
})
