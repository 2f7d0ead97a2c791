// A screen's filter form: its fields are the list operation's query parameters under the same
// names, and applying it puts them in the address (a link shows the same view). The data manager
// and the activity log use it; a field left empty is no filter.
import { useRef } from 'preact/hooks';
import { href, navigate, type Route } from './route.ts';
import { Link } from './ui.tsx';

type Field = readonly [name: string, label: string];

export interface FilterFields {
  /** A choice among values (the first option, "any", is no filter). */
  choices: readonly (readonly [name: string, label: string, values: readonly string[]])[];
  texts: readonly Field[];
  /** Time bounds, given as a date. */
  dates: readonly Field[];
}

/** Every field's query parameter. */
export const filterNames = (fields: FilterFields): string[] => [
  ...fields.choices.map(([n]) => n),
  ...fields.texts.map(([n]) => n),
  ...fields.dates.map(([n]) => n),
];

/**
 * The form of `fields` for the screen at `screen`; `keep` names parameters of the address that are
 * no filter and stay as they are (the data manager's columns).
 */
export function FilterForm({
  route,
  screen,
  fields,
  idPrefix,
  keep = [],
}: {
  route: Route;
  screen: string;
  fields: FilterFields;
  idPrefix: string;
  keep?: readonly string[];
}) {
  const form = useRef<HTMLFormElement>(null);
  function apply(e: Event) {
    e.preventDefault();
    const values = new FormData(form.current!);
    const next: Record<string, string> = {};
    for (const name of filterNames(fields)) {
      const v = String(values.get(name) ?? '').trim();
      if (v) next[name] = v;
    }
    for (const name of keep) {
      const v = route.query.get(name);
      if (v) next[name] = v;
    }
    navigate(href(screen, next));
  }
  const value = (name: string) => route.query.get(name) ?? '';
  const id = (name: string) => `${idPrefix}-${name}`;
  return (
    <form ref={form} class="filters" onSubmit={apply} aria-label="Filters">
      {fields.choices.map(([name, label, options]) => (
        <div class="field" key={name}>
          <label for={id(name)}>{label}</label>
          <select id={id(name)} name={name} value={value(name)}>
            <option value="">any</option>
            {options.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </div>
      ))}
      {fields.texts.map(([name, label]) => (
        <div class="field" key={name}>
          <label for={id(name)}>{label}</label>
          <input id={id(name)} name={name} value={value(name)} />
        </div>
      ))}
      {fields.dates.map(([name, label]) => (
        <div class="field" key={name}>
          <label for={id(name)}>{label}</label>
          <input id={id(name)} name={name} type="date" value={value(name)} />
        </div>
      ))}
      <div class="actions">
        <button class="primary" type="submit">
          Apply filters
        </button>
        <Link href={href(screen)}>Clear</Link>
      </div>
    </form>
  );
}
