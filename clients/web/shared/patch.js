// Arena Stream: a delta's patch applied to a view (docs/protocol-viewer.md, "Applying a patch").
// The one implementation for every page (live.js, and through it the scoreboard, the
// overlay and the handheld); clients/python/arena_client.py's apply_patch follows the
// same rule.
//
//   import { applyPatch } from "./patch.js";
//   const result = applyPatch(view, delta.patch);
//   if (result.ok) view = result.view;
//   else resync(result.path, result.reason);   // drop view, seq and epoch; subscribe again without since
//
// The view passed in is never changed: the patch is applied to a copy, which is returned.
// So when a patch can't be applied, the caller still holds the last good view (to show,
// marked stale, until the fresh snapshot arrives), never a half-patched one.
//
// A patch that can't be applied means the copy is not the server's view: a path that does
// not exist in it (a key the object lacks, a list item with no such id, a step through
// null, a number or a list without ids), or an entry that isn't a [path, value] pair.
// Patching around it would leave the page wrong without saying so; the only safe course
// is a fresh snapshot. Nothing here throws: the result says which path failed and why.

const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

/** A list whose items are addressed by id: every item an object with an `id`. */
const isKeyed = (list) => list.every((x) => isObject(x) && "id" in x);

const sameId = (item, key) => isObject(item) && "id" in item && String(item.id) === key;

function copy(view) {
  return typeof structuredClone === "function" ? structuredClone(view) : JSON.parse(JSON.stringify(view));
}

/** The object or list a key selects under `node`, or undefined if there is none. */
function child(node, key) {
  if (Array.isArray(node)) {
    return isKeyed(node) ? node.find((x) => sameId(x, key)) : undefined;
  }
  if (isObject(node) && has(node, key)) {
    const next = node[key];
    return isObject(next) || Array.isArray(next) ? next : undefined;
  }
  return undefined;
}

/** Set one path on `root` in place; returns the new root, or a string saying why it can't. */
function set(root, path, value) {
  if (path === "") return isObject(value) ? value : "the whole view must be an object";
  const keys = path.split("."), last = keys.pop();
  let node = root;
  for (const key of keys) {
    node = child(node, key);
    if (node === undefined) return `no "${key}" to go into`;
  }
  if (Array.isArray(node)) {
    if (!isKeyed(node)) return "a list without ids is replaced whole, not addressed by item";
    const i = node.findIndex((x) => sameId(x, last));
    if (value === null) {
      if (i < 0) return `no item "${last}" to remove`;
      node.splice(i, 1);
    } else if (!sameId(value, last)) {
      return `an item of the list must be an object with the id "${last}"`;
    } else if (i < 0) {
      node.push(value);
    } else {
      node[i] = value;
    }
    return root;
  }
  if (!isObject(node)) return "nothing to set a field on";
  if (!has(node, last)) return `no field "${last}"`;
  node[last] = value;
  return root;
}

/**
 * Apply one delta's patch to a copy of `view`.
 * @returns {{ok: true, view: object} | {ok: false, path: string, reason: string}}
 */
export function applyPatch(view, patch) {
  if (!Array.isArray(patch)) return { ok: false, path: "", reason: "the patch is not a list" };
  let root = isObject(view) ? copy(view) : view;
  for (const entry of patch) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== "string") {
      return { ok: false, path: String(Array.isArray(entry) ? entry[0] : ""), reason: "not a [path, value] pair" };
    }
    const [path, value] = entry;
    const next = set(root, path, value);
    if (typeof next === "string") return { ok: false, path, reason: next };
    root = next;
  }
  if (!isObject(root)) return { ok: false, path: "", reason: "there is no view to patch" };
  return { ok: true, view: root };
}
