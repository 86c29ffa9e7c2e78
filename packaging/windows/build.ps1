# Build the Windows bundle and its installer, from the repository root in PowerShell:
#   powershell -ExecutionPolicy Bypass -File packaging\windows\build.ps1
# Needs Python 3.11+ (python.org or `winget install Python.Python.3.12`) and Inno Setup 6
# (`winget install JRSoftware.InnoSetup`, which provides iscc.exe).
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..\..")

if (-not (Test-Path .venv-win)) { py -3 -m venv .venv-win }
$py = ".venv-win\Scripts\python.exe"
& $py -m pip install --upgrade pip wheel
# The package index's Windows build of torch is the CPU build.
& $py -m pip install "torch==2.13.0"
& $py -m pip install ".[app,parquet]" "pyinstaller>=6.10,<7" pillow
& $py -m PyInstaller packaging\meaningbench.spec --noconfirm --distpath dist --workpath build\pyinstaller
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }

# The same checks as `make bundle-check` that need no X server.
& dist\meaningbench\meaningbench-cli.exe --version
$study = & dist\meaningbench\meaningbench-cli.exe demo --no-gui
$env:HF_HUB_OFFLINE = "1"
& dist\meaningbench\meaningbench-cli.exe score $study --metrics bleu,meteor,bertscore --quiet
if ($LASTEXITCODE -ne 0) { throw "scoring with the bundled command line failed" }

$version = (& dist\meaningbench\meaningbench-cli.exe --version).Split(" ")[1]
$iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
if (-not $iscc) { $iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
& $iscc "/DAppVersion=$version" packaging\windows\meaningbench.iss
