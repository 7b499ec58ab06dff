// Installs Pi 1.5 (@earendil-works/pi-coding-agent) into ./pi15 for the
// end-to-end tests. Its package pins @earendil-works/pi-mcp, pi-codemode
// and pi-tui versions the npm registry does not serve, so `npm install`
// of it fails with ETARGET; its dist/bundle/cli.js bundles them, though.
// So: unpack the registry's tarball and install only its third-party
// dependencies. Runs as this package's postinstall (npm ci).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const version = "1.5.2";
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "pi15");
const pkg = join(root, "package");
const stamp = join(pkg, ".installed-" + version);
if (existsSync(stamp)) process.exit(0);

rmSync(root, { recursive: true, force: true });
mkdirSync(root, { recursive: true });
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ["ignore", "inherit", "inherit"] });
run(npm, ["pack", `@earendil-works/pi-coding-agent@${version}`, "--silent"], root);
const tgz = readdirSync(root).find((f) => f.endsWith(".tgz"));
run("tar", ["xzf", tgz], root);
const manifestPath = join(pkg, "package.json");
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
// Only what the bundle loads at run time: the @earendil-works packages are
// inside it, and some listed packages (not all served by the registry)
// are never imported by it.
const bundle = readdirSync(join(pkg, "dist", "bundle"), { recursive: true })
  .filter((f) => f.endsWith(".js"))
  .map((f) => readFileSync(join(pkg, "dist", "bundle", f), "utf8"))
  .join("\n");
for (const name of Object.keys(manifest.dependencies ?? {})) {
  const used = bundle.includes(`"${name}"`) || bundle.includes(`"${name}/`);
  if (name.startsWith("@earendil-works/") || !used) delete manifest.dependencies[name];
}
delete manifest.devDependencies;
delete manifest.scripts;
writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
run(npm, ["install", "--omit=dev", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"], pkg);
writeFileSync(stamp, "");
