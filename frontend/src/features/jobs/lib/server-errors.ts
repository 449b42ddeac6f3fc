// Put each 422 issue next to the field it names. FastAPI locs look like
// ["body", "params", "repeats"], ["body", "params", "cpu", "threads", 0] (tagged unions add the tag)
// or ["body", "host_ids"]; anything that names no field we show is a form-level error.
import type { ValidationIssue } from '../../../lib/api/errors';

export interface MappedErrors {
  fields: Record<string, string>;
  form: string[];
}

export function mapServerIssues(issues: ValidationIssue[], paramNames: string[], topLevel: string[] = ['host_ids', 'experiment']): MappedErrors {
  const fields: Record<string, string> = {};
  const form: string[] = [];
  const add = (name: string, msg: string) => {
    fields[name] = fields[name] ? `${fields[name]}; ${msg}` : msg;
  };
  for (const issue of issues) {
    const loc = issue.loc[0] === 'body' ? issue.loc.slice(1) : issue.loc;
    const pIdx = loc.indexOf('params');
    const afterParams = pIdx >= 0 ? loc.slice(pIdx + 1) : [];
    const param = afterParams.find((p): p is string => typeof p === 'string' && paramNames.includes(p));
    const top = loc.find((p): p is string => typeof p === 'string' && topLevel.includes(p));
    if (param) add(param, issue.msg);
    else if (pIdx < 0 && top) add(top, issue.msg);
    else form.push(loc.length ? `${loc.join('.')}: ${issue.msg}` : issue.msg);
  }
  return { fields, form };
}
