// Checks the alerts: deploy/kubernetes/prometheusrule.yaml's spec.groups are
// deploy/prometheus/gpuenv-alerts.yml's groups, exactly, and
// `promtool check rules` accepts them (the cases are in tests/alerts/, run by
// ctest as alerts_promtool).
//
//   node check-rules.mjs PROMETHEUSRULE.yaml RULES.yml   exit 0 ok, 1 problems
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { parse } from "yaml";

function main([ruleFile, plainFile]) {
  if (!ruleFile || !plainFile) {
    console.error("usage: node check-rules.mjs PROMETHEUSRULE.yaml RULES.yml");
    return 2;
  }
  const problems = [];
  let rule, plain;
  try {
    rule = parse(readFileSync(ruleFile, "utf8"));
    plain = parse(readFileSync(plainFile, "utf8"));
  } catch (e) {
    console.log(`invalid: ${e.message}`);
    return 1;
  }
  if (rule?.kind !== "PrometheusRule") problems.push(`${ruleFile}: not a PrometheusRule`);
  if (!isDeepStrictEqual(rule?.spec?.groups, plain?.groups))
    problems.push(`${ruleFile}: spec.groups differ from ${plainFile}'s groups; copy them over`);
  const r = spawnSync("promtool", ["check", "rules", plainFile], { encoding: "utf8" });
  if (r.error) problems.push(`promtool: ${r.error.message} (apt-get install prometheus)`);
  else if (r.status !== 0) problems.push(`promtool check rules: ${r.stdout}${r.stderr}`);
  for (const p of problems) console.log(`invalid: ${p}`);
  if (!problems.length) console.log(`valid: ${ruleFile} and ${plainFile}: the same groups`);
  return problems.length ? 1 : 0;
}

process.exit(main(process.argv.slice(2)));
