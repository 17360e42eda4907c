// remark-cli's configuration for `npm run lint:links`: every relative link
// and #anchor in the repository's Markdown must resolve, and none may leave
// the repository (a clone has nothing beside it). Offline: no Git remote is
// asked for and no URL is fetched (remark-validate-links checks local files
// and headings only; links to public URLs are left alone).
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import remarkValidateLinks from 'remark-validate-links';

const root = import.meta.dirname;

/** Warns on a relative link or definition whose path resolves outside `root`. */
function linksStayInside() {
  return (tree, file) => {
    const visit = (node) => {
      if (
        (node.type === 'link' || node.type === 'definition' || node.type === 'image') &&
        typeof node.url === 'string'
      ) {
        const path = node.url.split('#')[0].split('?')[0];
        // URLs with a scheme (https:, mailto:) and bare anchors are not paths.
        if (path !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(path)) {
          const target = path.startsWith('/')
            ? resolve(root, `.${path}`)
            : resolve(dirname(file.path), decodeURI(path));
          const inside = relative(root, target);
          if (inside.startsWith('..') || isAbsolute(inside)) {
            file.message(`Link leaves the repository: \`${node.url}\``, {
              place: node.position,
              ruleId: 'link-outside-repository',
              source: 'parkbench',
            });
          }
        }
      }
      for (const child of node.children ?? []) visit(child);
    };
    visit(tree);
  };
}

export default {
  plugins: [[remarkValidateLinks, { repository: false, root }], linksStayInside],
};
