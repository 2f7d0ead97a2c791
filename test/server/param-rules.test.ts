// The parameter rules over HTTP: 400 naming the field, nothing stored, also after a project merge and
// on training tasks. Each rule on its own: test/unit/server/param-rules.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { image, textCollection, formCollection, ner, imageAnnotation, variant, type Params } from '../support/param-fixtures.ts';
import { client, startTestServer, type TestServer } from '../support/server.ts';

describe('over HTTP', () => {
  let server: TestServer;
  let current: ReturnType<typeof client>;
  let legacy: ReturnType<typeof client>;
  const cb = 'https://example.com/cb';

  beforeAll(async () => {
    server = await startTestServer('pglite');
    const account = await createAccount(server.uow, 'param-rules', new Date());
    current = client(server, 'current', account.test_key);
    legacy = client(server, 'legacy', account.test_key);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each<[string, 'current' | 'legacy', string, Params, string]>([
    [
      'line vertex bounds',
      'current',
      'lineannotation',
      { attachment: image, objects_to_annotate: ['lane'], min_vertices: '3', max_vertices: '2' },
      'max_vertices (2) must be at least min_vertices (3)',
    ],
    [
      'line vertex bounds, older generation',
      'legacy',
      'polygonannotation',
      { attachment: image, objects_to_annotate: ['a'], min_vertices: 3, max_vertices: 2 },
      'max_vertices',
    ],
    [
      'segmentation labels',
      'legacy',
      'segmentannotation',
      { attachment: image, labels: ['car'], instance_labels: ['car'] },
      'instance_labels/0',
    ],
    [
      'category ids',
      'current',
      'categorization',
      { instruction: 'Pick.', attachment_type: 'text', attachment: 't', categories: ['a'], category_ids: { x: 'b' } },
      'category_ids/x',
    ],
    [
      'NER relationship label',
      'current',
      'namedentityrecognition',
      variant(ner, (p) => {
        p.relationships[0].target_label = 'COMPANY';
      }),
      'request/body/relationships/0/target_label "COMPANY" is not a label of the task',
    ],
    [
      'text collection forms',
      'current',
      'textcollection',
      variant(formCollection, (p) => {
        p.fields.push({ type: 'text', field_id: 'loose', title: 'Loose' });
      }),
      'request/body/fields must be either all form fields or no form fields',
    ],
    [
      'text collection field_id',
      'current',
      'textcollection',
      variant(textCollection, (p) => {
        p.fields[4].field_id = 'quality';
      }),
      'fields/4/field_id "quality" is used twice',
    ],
    [
      'image hypothesis',
      'current',
      'imageannotation',
      variant(imageAnnotation, (p) => {
        p.hypothesis.annotations[0].label = 'bus';
      }),
      'hypothesis/annotations/0/label',
    ],
  ])('%s: 400 naming the field, nothing stored', async (_name, gen, type, params, message) => {
    const api = gen === 'current' ? current : legacy;
    const before = (await api('GET', '/v1/tasks')).body.total;
    const res = await api('POST', `/v1/task/${type}`, { json: { callback_url: cb, ...params } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(message);
    expect((await api('GET', '/v1/tasks')).body.total).toBe(before);
  });

  it('checks the parameters merged from a project', async () => {
    const project = await current('POST', '/v1/projects', {
      json: { type: 'segmentannotation', name: 'streets', params: { labels: ['road', 'car'] } },
    });
    expect(project.status, project.text).toBe(200);
    const before = (await current('GET', '/v1/tasks')).body.total;
    const res = await current('POST', '/v1/task/segmentannotation', {
      json: { callback_url: cb, project: 'streets', attachment: image, instance_labels: ['car'] },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain('request/body/instance_labels/0 "car" is also in labels');
    expect((await current('GET', '/v1/tasks')).body.total).toBe(before);
    const ok = await current('POST', '/v1/task/segmentannotation', {
      json: { callback_url: cb, project: 'streets', attachment: image, instance_labels: ['person'] },
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it('checks training and evaluation tasks too', async () => {
    const before = (await current('GET', '/v1/training_tasks')).body.total;
    // (Without the choice "3": the server's coercion turns a JSON "3" into 3, so it would clash with 3.)
    const bad = variant(textCollection, (p) => {
      p.fields[0].choices.pop();
      p.fields[3].min = 9;
    });
    const training = await current('POST', '/v1/training_tasks/textcollection', {
      json: { ...bad, expected_response: { annotations: {} } },
    });
    expect(training.status, training.text).toBe(400);
    expect(training.body.error).toContain('request/body/fields/3/min (9) must not be above max (5)');
    expect((await current('GET', '/v1/training_tasks')).body.total).toBe(before);
    const evaluation = await current('POST', '/v1/evaluation_tasks/namedentityrecognition', {
      json: {
        ...variant(ner, (p) => {
          p.labels[1].name = 'PERSON';
        }),
        expected_response: { annotations: [], relationships: [] },
      },
    });
    expect(evaluation.status, evaluation.text).toBe(400);
    expect(evaluation.body.error).toContain('labels/1/name "PERSON" is used twice');
    expect((await current('GET', '/v1/evaluation_tasks')).body.total).toBe(0);
  });
});
