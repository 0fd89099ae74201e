/* Arena Stream handheld: the service worker that keeps the app shell, so the
 * page opens and reloads with no network. Events are not its business: the
 * page keeps them in IndexedDB and sends them itself (handheld-outbox.js).
 *
 * Scope: /clients/ (where this file lives: the one file at the top of clients/web, since a
 * worker's scope is at most the folder of its URL). The page at /handheld forwards to
 * /clients/handheld.html (handheld/handheld.html, by its flat name) so that it is inside it.
 *
 * Strategy for the shell: network first (so an update arrives on the next
 * load), with a short timeout, then the cache. Everything else passes through. */
"use strict";

const VERSION = "handheld-v7";
// The page and every module it imports, at the URLs the page loads them from (handheld-main.js
// is the entry; handheld.js lists the handheld's modules; shared/ holds what other pages use too:
// watch.js and patch.js, the connection, common.js, the helpers).
const SHELL = [
  "/clients/handheld.html",
  "/clients/handheld/handheld-main.js",
  "/clients/handheld/handheld.js",
  "/clients/handheld/handheld-state.js",
  "/clients/handheld/handheld-alerts.js",
  "/clients/handheld/handheld-device.js",
  "/clients/handheld/handheld-outbox.js",
  "/clients/handheld/handheld-feed.js",
  "/clients/handheld/handheld-views.js",
  "/clients/handheld/handheld-sheets.js",
  "/clients/handheld/handheld-timer.js",
  "/clients/shared/refusals.js",
  "/clients/shared/common.js",
  "/clients/shared/watch.js",
  "/clients/shared/roster.js",
  "/clients/shared/patch.js",
  "/clients/handheld/handheld.css",
  "/clients/handheld/manifest.webmanifest",
  "/clients/shared/icons/icon-192.png",
  "/clients/shared/icons/icon-512.png",
  "/clients/shared/icons/maskable-192.png",
  "/clients/shared/icons/maskable-512.png",
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
