/**
 * The dashboard's only script, served at `{path}/assets/dashboard.js`: on a job's page it follows
 * the live stream named by `<body data-stream>` and writes what arrives as text (textContent,
 * never markup). Without it every page still works; the job page just does not move.
 */
export const DASHBOARD_JS = `'use strict';
(function () {
  var url = document.body.getAttribute('data-stream');
  if (!url || typeof EventSource === 'undefined') return;
  var source = new EventSource(url);
  function setText(id, value) {
    var node = document.getElementById(id);
    if (node) node.textContent = value;
  }
  source.addEventListener('job', function (message) {
    var job = JSON.parse(message.data);
    setText('job-status', job.status);
    setText('job-stage', job.stage === null ? '' : job.stage);
    var bar = document.getElementById('job-progress');
    if (bar) {
      bar.value = job.progress;
      bar.textContent = job.progress + '%';
    }
    setText('job-progress-text', job.progress + '%');
    setText('job-attempts', job.attempts + (job.maxAttempts === null ? '' : ' / ' + job.maxAttempts));
    setText('job-error', job.lastError === null ? '' : job.lastError);
    setText('job-dependencies', job.unfinishedDependencies + ' unfinished');
  });
  source.addEventListener('log', function (message) {
    var entry = JSON.parse(message.data);
    var list = document.getElementById('job-events');
    if (!list || list.querySelector('[data-event-id="' + entry.id + '"]')) return;
    var item = document.createElement('li');
    item.setAttribute('data-event-id', entry.id);
    item.className = 'event-' + entry.kind;
    var at = document.createElement('time');
    at.setAttribute('datetime', entry.at);
    at.textContent = entry.at.replace('T', ' ').replace(/\\.\\d+Z$/, 'Z');
    var kind = document.createElement('span');
    kind.className = 'kind';
    kind.textContent = entry.kind;
    var text = document.createElement('span');
    text.className = 'message';
    text.textContent = entry.message === null ? '' : entry.message;
    item.append(at, ' ', kind, ' ', text);
    if (entry.data !== null && entry.data !== undefined) {
      var data = document.createElement('code');
      data.className = 'data';
      data.textContent = JSON.stringify(entry.data);
      item.append(' ', data);
    }
    list.appendChild(item);
  });
  // The job is finished: the stream ends here (EventSource would otherwise reconnect), with
  // the result, which the page shows as it would after a reload.
  source.addEventListener('end', function (message) {
    source.close();
    var end = JSON.parse(message.data);
    if ('result' in end) {
      var result = JSON.stringify(end.result, null, 2);
      setText('job-result', result === undefined ? 'undefined' : result);
    }
  });
})();
`;
