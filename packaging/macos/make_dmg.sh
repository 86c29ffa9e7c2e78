#!/usr/bin/env bash
# Build MeaningBench.app and a disk image for macOS, from the repository root on a Mac:
#   packaging/macos/make_dmg.sh
# Needs Python 3.11+ (python.org or Homebrew) and the Xcode command line tools (hdiutil,
# codesign). The spec makes dist/MeaningBench.app on macOS (the command line is
# MeaningBench.app/Contents/MacOS/meaningbench-cli). Set CODESIGN_IDENTITY to sign with a
# Developer ID; notarising is then `xcrun notarytool submit dist/*.dmg --wait ...`.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d .venv-mac ] || python3 -m venv .venv-mac
PY=.venv-mac/bin/python
$PY -m pip install --upgrade pip wheel
# The package index's macOS build of torch is the CPU (and Metal) build.
$PY -m pip install "torch==2.13.0"
$PY -m pip install ".[app,parquet]" "pyinstaller>=6.10,<7" pillow
$PY -m PyInstaller packaging/meaningbench.spec --noconfirm --distpath dist --workpath build/pyinstaller

APP=dist/MeaningBench.app
CLI="$APP/Contents/MacOS/meaningbench-cli"
VERSION=$("$CLI" --version | awk '{print $2}')
study=$("$CLI" demo --no-gui)
HF_HUB_OFFLINE=1 "$CLI" score "$study" --metrics bleu,meteor,bertscore --quiet

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    codesign --deep --force --options runtime --timestamp --sign "$CODESIGN_IDENTITY" "$APP"
fi
STAGE=$(mktemp -d)
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
DMG="dist/MeaningBench-$VERSION-$(uname -m).dmg"
hdiutil create -volname "MeaningBench $VERSION" -srcfolder "$STAGE" -ov -format UDZO "$DMG"
rm -rf "$STAGE"
echo "make_dmg: $DMG"
