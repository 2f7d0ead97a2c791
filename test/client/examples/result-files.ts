import { createClient, withResultFiles } from '../../../client/index.ts';

const client = createClient({ apiKey: process.env.HUMANTASK_API_KEY!, baseUrl: process.env.HUMANTASK_URL!, throwOnError: true });

// A video task: in test mode it is completed at once, its tracks and events kept as files.
const { data: created } = await client.tasks.create('videoplaybackannotation', {
  callback_url: 'https://example.com/humantask/callback',
  attachment: 'https://example.com/videos/drive-7.mp4',
  geometries: { box: { objects_to_annotate: ['car', 'truck'] } },
  events_to_annotate: ['lane change'],
});
const { data } = await client.tasks.get(created.task_id);
console.log('linked:', data.response && 'annotations' in data.response && 'url' in data.response.annotations);

// The files read and put in place: the response has the type's inline shape.
const task = await withResultFiles(client, data);
if (task.type === 'videoplaybackannotation' && task.response && !('error' in task.response)) {
  for (const track of task.response.annotations) console.log(track.label, track.frames.length);
  console.log('events:', task.response.events.length);
}
