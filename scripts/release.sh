#!/bin/sh
# Builds the release archives of mcpgw into dist/: linux and darwin, amd64
# and arm64, each a tar.gz with the binary, LICENSE and README.md, its
# CycloneDX SBOM (from the binary's embedded module list), and
# checksums.txt (SHA-256) over all of them. Then checks what it built.
#
#   VERSION=v1.2.3 scripts/release.sh     (default: git describe)
#
# Needs Go and the module proxy (for cyclonedx-gomod); runs in CI as is.
set -eu
cd "$(dirname "$0")/.."
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
out=dist
sbom="go run github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0"
rm -rf "$out"
mkdir -p "$out"
for os in linux darwin; do
	for arch in amd64 arm64; do
		name="mcpgw_${version}_${os}_${arch}"
		dir="$out/$name"
		mkdir -p "$dir"
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
			-ldflags "-s -w -X main.version=$version" -o "$dir/mcpgw" ./cmd/mcpgw
		cp LICENSE README.md "$dir/"
		$sbom bin -json -licenses=false -version "$version" -output "$out/$name.sbom.json" "$dir/mcpgw"
		tar -C "$out" -czf "$out/$name.tar.gz" "$name"
		rm -rf "$dir"
	done
done
(cd "$out" && sha256sum ./*.tar.gz ./*.sbom.json >checksums.txt)

# Check: four archives, each with an executable of its platform, an SBOM
# naming the MCP SDK, and checksums that verify.
(cd "$out" && sha256sum --quiet -c checksums.txt)
n=0
for a in "$out"/*.tar.gz; do
	n=$((n + 1))
	base=$(basename "$a" .tar.gz)
	tar -tzf "$a" | grep -qx "$base/mcpgw" || { echo "release: $a has no mcpgw" >&2; exit 1; }
	grep -q '"bomFormat": "CycloneDX"' "$out/$base.sbom.json" || { echo "release: $base.sbom.json is not CycloneDX" >&2; exit 1; }
	grep -q 'github.com/modelcontextprotocol/go-sdk' "$out/$base.sbom.json" || { echo "release: $base.sbom.json lacks the MCP SDK" >&2; exit 1; }
done
[ "$n" -eq 4 ] || { echo "release: $n archives, want 4" >&2; exit 1; }
echo "release $version: $(ls "$out" | tr '\n' ' ')"
