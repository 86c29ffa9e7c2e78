; Inno Setup script: a Windows installer for the PyInstaller bundle.
;
; On Windows, after `packaging\windows\build.ps1` (or the PyInstaller build by hand) has made
; dist\meaningbench\ with MeaningBench.exe and meaningbench.exe:
;   iscc /DAppVersion=0.1.0 packaging\windows\meaningbench.iss
; The installer is written to packaging\windows\Output\MeaningBench-<version>-setup.exe.
; It installs per user by default (no administrator rights needed), adds a Start menu entry,
; opens .mbstudy files with MeaningBench, and can put the command line on the user's PATH.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "MeaningBench"
#define BundleDir "..\..\dist\meaningbench"

[Setup]
AppId={{6C0F4E0B-6F7C-4C55-9C1E-4D1B8E6E2A31}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=MeaningBench
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputBaseFilename={#AppName}-{#AppVersion}-setup
Compression=lzma2/max
SolidCompression=yes
ChangesAssociations=yes
ChangesEnvironment=yes
UninstallDisplayIcon={app}\MeaningBench.exe
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Put the meaningbench command line on my PATH"; Flags: unchecked

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\MeaningBench.exe"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\MeaningBench.exe"; Tasks: desktopicon

[Registry]
; .mbstudy files and rater kits (.mbkit) open in MeaningBench (per user, or for all users in an
; administrator install).
Root: HKA; Subkey: "Software\Classes\.mbstudy"; ValueType: string; ValueName: ""; ValueData: "MeaningBench.Study"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.mbkit"; ValueType: string; ValueName: ""; ValueData: "MeaningBench.Study"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\MeaningBench.Study"; ValueType: string; ValueName: ""; ValueData: "MeaningBench study"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\MeaningBench.Study\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\MeaningBench.exe,0"
Root: HKA; Subkey: "Software\Classes\MeaningBench.Study\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\MeaningBench.exe"" ""%1"""
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\MeaningBench.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Path: string;
begin
  if not RegQueryStringValue(HKCU, 'Environment', 'Path', Path) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Path) + ';') = 0;
end;
