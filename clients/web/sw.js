/* Arena Stream handheld: the service worker that keeps the app shell, so the
 * page opens and reloads with no network. Events are not its business: the
 * page keeps them in IndexedDB and sends them itself (handheld-outbox.js).
 *
 * Scope: /clients/ (where this file lives). The page at /handheld forwards to
 * /clients/handheld.html so that it is inside the scope.
 *
 * Strategy for the shell: network first (so an update arrives on the next
 * load), with a short timeout, then the cache. Everything else passes through. */
"use strict";

const VERSION = "handheld-v6";
// The page and every module it imports (handheld-main.js is the entry; handheld.js lists the
// handheld's modules; watch.js and patch.js are the connection the scoreboard uses too, and
// common.js the helpers every page shares).
const SHELL = [
  "/clients/handheld.html",
  "/clients/handheld-main.js",
  "/clients/handheld.js",
  "/clients/handheld-state.js",
  "/clients/handheld-alerts.js",
  "/clients/handheld-device.js",
  "/clients/handheld-outbox.js",
  "/clients/handheld-feed.js",
  "/clients/handheld-views.js",
  "/clients/handheld-sheets.js",
  "/clients/handheld-timer.js",
  "/clients/refusals.js",
  "/clients/common.js",
  "/clients/watch.js",
  "/clients/roster.js",
  "/clients/patch.js",
  "/clients/handheld.css",
  "/clients/manifest.webmanifest",
  "/clients/icons/icon-192.png",
  "/clients/icons/icon-512.png",
  "/clients/icons/maskable-192.png",
  "/clients/icons/maskable-512.png",
];
const NETWORK_TIMEOUT_MS = 2500;

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(VERSION);
    await cache.addAll(SHELL.map((url) => new Request(url, { cache: "reload" })));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith("handheld-") && key !== VERSION) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

function shellKey(request) {
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return null;
  if (request.mode === "navigate" && url.pathname === "/clients/handheld.html") return url.pathname;
  return SHELL.includes(url.pathname) ? url.pathname : null;
}

async function networkFirst(request, key) {
  const cache = await caches.open(VERSION);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), NETWORK_TIMEOUT_MS);
  try {
    // A navigation request can't be re-issued with options: fetch its URL.
    const target = request.mode === "navigate" ? request.url : request;
    const response = await fetch(target, { signal: controller.signal, cache: "no-cache" });
    if (response.ok) await cache.put(key, response.clone());
    return response;
  } catch (err) {
    const cached = await cache.match(key, { ignoreSearch: true });
    if (cached) return cached;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

self.addEventListener("fetch", (event) => {
  if (event.request.method !== "GET") return;
  const key = shellKey(event.request);
  if (key === null) return;
  event.respondWith(networkFirst(event.request, key));
});
