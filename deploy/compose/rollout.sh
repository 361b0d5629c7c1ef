#!/usr/bin/env bash
# Rolls the compose stack's api replicas to a new image without failing a request
# (docs/operations/upgrading.md, "Upgrading the compose stack"): the new release's migrations while
# the old replicas serve, as many new replicas again beside them, a wait until HAProxy
# sends to the new ones, then the old ones stopped one by one (each fails its readiness,
# serves SHUTDOWN_DELAY_MS more, drains) and removed.
#
#   deploy/compose/rollout.sh                 build this tree as the new release, then roll
#   deploy/compose/rollout.sh --image IMAGE   roll to an image already built, e.g. back to
#                                             the release before (plant-store:<tag>-previous)
#
# Run it in the project's folder, with the variables `docker compose` reads there
# (COMPOSE_PROJECT_NAME, PLANT_STORE_TAG, ...). The image keeps its name,
# plant-store:${PLANT_STORE_TAG:-local}, so later `docker compose` commands run the new
# release; the release it replaces is kept as that name with `-previous`.
set -euo pipefail

# How long new replicas may take to start and be sent requests, in seconds.
READY_TIMEOUT=${ROLLOUT_READY_TIMEOUT:-180}

target=""
case "${1:-}" in
  "") ;;
  --image) target=${2:?"--image needs an image"} ;;
  *) echo "usage: $0 [--image IMAGE]" >&2; exit 2 ;;
esac

if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
image="plant-store:${PLANT_STORE_TAG:-local}"
previous="${image}-previous"
now() { date +%s; }
started=$(now)
say() { printf 'rollout [%3d s]: %s\n' "$(($(now) - started))" "$*" >&2; }

api_containers() { "${compose[@]}" ps -a -q api; }
running() { [ "$(docker inspect -f '{{.State.Running}}' "$1")" = true ]; }

old=()
for id in $(api_containers); do
  if running "$id"; then
    old+=("$id")
  else
    # A replica of the old release that is not running serves nothing, and `up` would
    # start it again on the old image.
    docker rm --force "$id" >/dev/null
  fi
done
replicas=${#old[@]}
if [ "$replicas" -eq 0 ]; then
  say "no api replica runs: start the stack with docker compose up -d"
  exit 1
fi
old_image=$(docker inspect -f '{{.Image}}' "${old[0]}")

previous_image=$(docker image inspect -f '{{.Id}}' "$previous" 2>/dev/null || true)

new=()
# Until the old replicas are stopped, a failure leaves them serving, removes the new
# ones and gives the image names back.
undo() {
  say "failed: the old replicas keep serving; removing the new ones"
  [ ${#new[@]} -eq 0 ] || docker rm --force "${new[@]}" >/dev/null
  docker tag "$old_image" "$image"
  if [ -n "$previous_image" ]; then docker tag "$previous_image" "$previous"; fi
}
trap undo ERR

if [ -n "$target" ]; then
  target_image=$(docker image inspect -f '{{.Id}}' "$target")
  docker tag "$old_image" "$previous"
  docker tag "$target_image" "$image"
else
  docker tag "$old_image" "$previous"
  # The commit, for the image's labels and the service's reports (docker-compose.yml).
  PLANT_STORE_REVISION=${PLANT_STORE_REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
  export PLANT_STORE_REVISION
  say "building $image at revision $PLANT_STORE_REVISION"
  "${compose[@]}" build migrate
fi
say "$replicas replicas of $(docker image inspect -f '{{.Id}}' "$previous" | cut -c1-19) -> $(docker image inspect -f '{{.Id}}' "$image" | cut -c1-19)"

say "applying the new release's migrations while the old replicas serve"
"${compose[@]}" run --rm migrate

say "starting $replicas new replicas beside the old ones"
"${compose[@]}" up -d --no-deps --no-recreate --scale "api=$((2 * replicas))" api
for id in $(api_containers); do
  [[ " ${old[*]} " == *" $id "* ]] || new+=("$id")
done
if [ ${#new[@]} -ne "$replicas" ]; then
  say "expected $replicas new replicas, found ${#new[@]}"
  false
fi

# HAProxy finds replicas by DNS (deploy/haproxy/haproxy.cfg) and sends to one once it has
# answered /health/ready twice: the gate that matters, sooner than the engine's health
# status (Docker checks every 10 s). Its stats page, asked from a new replica's Node.js.
addresses=()
for id in "${new[@]}"; do
  addresses+=("$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$id"):3000")
done
balanced() {
  docker exec "${new[0]}" node -e "
    fetch('http://balancer:8404/stats;csv').then((response) => response.text()).then((csv) => {
      const [header, ...rows] = csv.split('\n').map((line) => line.replace(/^# /, '').split(','));
      const column = (name) => header.indexOf(name);
      const up = rows
        .filter((row) => row[column('pxname')] === 'replicas' && row[column('status')] === 'UP')
        .map((row) => row[column('addr')]);
      process.exit(process.argv.slice(1).every((address) => up.includes(address)) ? 0 : 1);
    }, () => process.exit(1));" "${addresses[@]}"
}
say "waiting until HAProxy sends to the new replicas"
deadline=$(($(now) + READY_TIMEOUT))
until balanced; do
  for id in "${new[@]}"; do
    if ! running "$id"; then
      say "new replica $id stopped:"
      docker logs --tail 20 "$id" >&2 || true
      false
    fi
  done
  if [ "$(now)" -gt "$deadline" ]; then
    say "HAProxy does not send to the new replicas (${addresses[*]}) after ${READY_TIMEOUT} s"
    false
  fi
  sleep 1
done
trap - ERR

for id in "${old[@]}"; do
  say "stopping old replica $(docker inspect -f '{{.Name}}' "$id")"
  docker stop "$id" >/dev/null
  docker rm "$id" >/dev/null
done
say "rolled $replicas replicas in $(($(now) - started)) s; the release before is $previous"
